import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { withoutPassword } from '../../src/core/db/backup.ts'
import { createDb } from '../../src/core/db/create-db.ts'
import { parsePostgresUrl } from '../../src/core/db/postgres-url.ts'
import { type Cleanup, testDialect } from '../helpers/build-app.ts'
import { startFaultProxy } from '../helpers/fault-proxy.ts'

describe('PostgreSQL connection strings with several hosts', () => {
  it('reads the multi-host form pg_auto_failover hands out, with libpq defaults', () => {
    const url = parsePostgresUrl('postgres://triad:s%40cret@10.0.0.1:5501,[::1]:5502,db3/triad?target_session_attrs=read-write&sslmode=disable')
    assert.deepEqual(url.hosts, [
      { host: '10.0.0.1', port: 5501 },
      { host: '[::1]', port: 5502 },
      { host: 'db3', port: 5432 },
    ])
    assert.equal(url.targetSessionAttrs, 'read-write')
    // What node-postgres reads: one host, the password kept, target_session_attrs (unknown to it)
    // and sslmode (given to it as TLS settings, core/db/pg-tls.ts) left out.
    assert.equal(url.forHost(url.hosts[1]), 'postgres://triad:s%40cret@[::1]:5502/triad')
    assert.deepEqual(url.withoutPassword(), { url: 'postgres://triad@10.0.0.1:5501,[::1]:5502,db3/triad?target_session_attrs=read-write&sslmode=disable', hadPassword: true })
    assert.equal(parsePostgresUrl('postgresql://h/db').targetSessionAttrs, 'any')
  })

  it('says what is wrong with a string it cannot use', () => {
    assert.throws(() => parsePostgresUrl('postgres://h1:5432,h2:99999/db'), /port 99999 of "h2:99999" is not a TCP port/)
    assert.throws(() => parsePostgresUrl('mysql://h/db'), /is not a postgres:\/\/ URL/)
  })

  it('gives pg_dump the hosts without the password', () => {
    assert.deepEqual(withoutPassword('postgres://u:p@h1:1,h2:2/db'), { url: 'postgres://u@h1:1,h2:2/db', hadPassword: true })
  })

  it('with several hosts, takes a connection only where synchronous replication is on', { skip: testDialect === 'postgres' ? false : 'needs TEST_DATABASE_URL' }, async (t: Cleanup) => {
    const real = new URL(process.env.TEST_DATABASE_URL ?? '')
    const proxy = await startFaultProxy({ host: real.hostname, port: Number(real.port || 5432) })
    // The test server replicates to nobody: like a standby just promoted, before the other follows it.
    const database = await createDb(`postgres://${real.username ? `${real.username}@` : ''}${proxy.address},${proxy.address}${real.pathname}`, { poolSize: 1 })
    t.after(async () => {
      await database.destroy()
      await proxy.close()
    })
    await assert.rejects(database.ping(), /does not accept writes yet/)
  })

  it('refuses a target_session_attrs that cannot take writes', { skip: testDialect === 'postgres' ? false : 'needs TEST_DATABASE_URL' }, async () => {
    const url = new URL(process.env.TEST_DATABASE_URL ?? '')
    url.searchParams.set('target_session_attrs', 'standby')
    await assert.rejects(createDb(url.toString()), /target_session_attrs=standby cannot be used: Triad writes/)
  })

  it('connects to the next host when the first refuses, and moves back when the one in use goes away', { skip: testDialect === 'postgres' ? false : 'needs TEST_DATABASE_URL' }, async (t: Cleanup) => {
    const real = new URL(process.env.TEST_DATABASE_URL ?? '')
    const first = await startFaultProxy({ host: real.hostname, port: Number(real.port || 5432) })
    const second = await startFaultProxy({ host: real.hostname, port: Number(real.port || 5432) })
    await first.down()
    const schema = `test_${randomBytes(6).toString('hex')}`
    const hosts = [first.address, second.address].join(',')
    const database = await createDb(`postgres://${real.username ? `${real.username}@` : ''}${hosts}${real.pathname}?target_session_attrs=read-write`, {
      schema,
      poolSize: 2,
      // One server behind two proxies: no standby, so no synchronous replication to require.
      requireSynchronousStandby: false,
    })
    t.after(async () => {
      await second.up()
      const drop = () => sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db)
      // A connection the test's outage broke may fail once more.
      await drop().catch(drop)
      await database.destroy()
      await first.close()
      await second.close()
    })
    const serverPort = async () => Number((await sql<{ port: string }>`select inet_server_port()::text as port`.execute(database.db)).rows[0].port)
    assert.ok((await serverPort()) > 0)
    await database.ping()

    // The host in use goes away: a connection it had may fail once (a 503 for the request that
    // met it); the next connection finds the other host.
    await first.up()
    await second.down()
    assert.ok((await serverPort().catch(() => serverPort())) > 0)
    await database.ping()
  })
})
