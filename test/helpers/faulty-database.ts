import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import { createDb, type Database } from '../../src/core/db/create-db.ts'
import type { Cleanup } from './build-app.ts'
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts'

export interface FaultyDatabase {
  /** The app's database, reached through `proxy`. */
  database: Database
  proxy: FaultProxy
  /** The same schema over a direct connection: to look at what was stored while the proxy is broken. */
  direct: Database
}

/** A fresh PostgreSQL schema (of TEST_DATABASE_URL) reached through a fault proxy, dropped when the test ends. */
export async function faultyDatabase(t: Cleanup, options: { poolSize?: number } = {}): Promise<FaultyDatabase> {
  const url = new URL(process.env.TEST_DATABASE_URL ?? '')
  assert.match(url.protocol, /^postgres/, 'a fault proxy stands in front of PostgreSQL')
  const proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) })
  const schema = `test_${randomBytes(6).toString('hex')}`
  const direct = await createDb(url.toString(), { schema, poolSize: 2 })
  const proxied = new URL(url)
  proxied.host = proxy.address
  const database = await createDb(proxied.toString(), { schema, poolSize: options.poolSize ?? 5 })
  t.after(async () => {
    await proxy.up()
    await database.destroy().catch(() => {})
    await proxy.close()
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(direct.db)
    await direct.destroy()
  })
  return { database, proxy, direct }
}
