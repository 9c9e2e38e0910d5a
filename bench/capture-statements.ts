// Statements per capture (issue 27, item 1): what POST /transactions/{id}/captures sends to the
// database, counted by the database's own query observer, on SQLite and (when reachable) on
// PostgreSQL; a round trip is a statement on PostgreSQL, a call into SQLite on SQLite. The
// first capture of an authorization reads no trail (it is empty); later ones read it. With a
// webhook endpoint, each capture also writes one delivery.
// Usage: node bench/capture-statements.ts [--smoke]   (the figures do not depend on the load)
import { sql } from 'kysely'
import { createDb } from '../src/core/db/create-db.ts'
import type { Cleanup } from '../test/helpers/build-app.ts'
import { authorize, merchantFixture } from '../test/services/payments/helpers.ts'
import { reportRow } from './lib.ts'

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://127.0.0.1:5432/test'

async function pgReachable(): Promise<boolean> {
  try {
    const database = await createDb(PG_URL)
    await sql`select 1`.execute(database.db)
    await database.destroy()
    return true
  } catch {
    return false
  }
}

/** Counts the statements of a first and a second capture, without and with a webhook endpoint. */
async function countOn(engine: 'sqlite' | 'postgres'): Promise<string> {
  const cleanups: Array<() => unknown> = []
  const t: Cleanup = { after: (fn) => void cleanups.push(fn) }
  try {
    const fixture = await merchantFixture(t, { env: { PAYMENTS_RATE_LIMIT: '0' } })
    let statements: string[] = []
    fixture.database.observeQueries((query) => statements.push(query.sql))
    const counts: string[] = []
    for (const withEndpoint of [false, true]) {
      if (withEndpoint) {
        const created = await fixture.call('POST', `/merchants/${fixture.merchant.id}/webhooks`, { url: 'https://hooks.example/triad', events: ['*'] })
        if (created.statusCode !== 201) throw new Error(`webhook endpoint: ${created.statusCode} ${created.body}`)
      }
      const id = await authorize(fixture, fixture.merchant.id, { amount: 1_000 })
      for (const which of ['first', 'second']) {
        statements = []
        const response = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1 })
        if (response.statusCode !== 201) throw new Error(`capture: ${response.statusCode} ${response.body}`)
        counts.push(`${which}${withEndpoint ? ' (webhook endpoint)' : ''} ${statements.length}`)
      }
    }
    return `${counts.join(', ')} — ${engine === 'sqlite' ? 'BEGIN and COMMIT counted (group commit shares them among the captures that arrive together)' : 'BEGIN and COMMIT counted; the writes go as one statement'}`
  } finally {
    for (const fn of cleanups.reverse()) await fn()
  }
}

// The test helpers read TEST_DATABASE_URL when first imported: each engine is counted in a
// process of its own.
const engine = process.env.CAPTURE_STATEMENTS_ENGINE as 'sqlite' | 'postgres' | undefined
if (engine) {
  console.log(JSON.stringify(await countOn(engine)))
} else {
  const { execFileSync } = await import('node:child_process')
  const run = (name: 'sqlite' | 'postgres', url?: string) => {
    const { TEST_DATABASE_URL: _unused, ...env } = process.env
    const output = execFileSync(process.execPath, [new URL(import.meta.url).pathname], {
      env: { ...env, CAPTURE_STATEMENTS_ENGINE: name, LOG_LEVEL: 'silent', ...(url ? { TEST_DATABASE_URL: url } : {}) },
      encoding: 'utf8',
    })
    return JSON.parse(output.trim().split('\n').at(-1) ?? '""') as string
  }
  const rows: Array<[string, string]> = [['SQLite', run('sqlite')]]
  rows.push(['PostgreSQL', (await pgReachable()) ? run('postgres', PG_URL) : `skipped: no PostgreSQL at ${PG_URL}`])
  for (const [name, figure] of rows) {
    console.log(`${name}: ${figure}`)
    reportRow({ benchmark: 'capture-statements', measure: `POST /transactions/{id}/captures: statements per capture on ${name}`, target: '—', figure, met: null, command: 'node bench/capture-statements.ts' })
  }
}
