import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { testDialect } from '../helpers/build-app.ts'
import { type KeyKind, PLACEMENT, runWriteScenarios, shapeOf, signatureOf, startTracedApp, unitsOf } from '../helpers/write-scenarios.ts'

// docs/scaling.md's claim, checked on every write route: a write transaction touches one
// merchant (payments), one eperson (authn) or one session (avatar), so the tables can be
// distributed by that key. Each request's SQL comes from Kysely's log hook, the rows it changed
// from the tables before and after. The statements a distributed engine would send to more than
// one shard are listed in docs/scaling.md; a new one fails here until it is listed there.

/** Write routes the scenarios do not run, and why nothing of theirs is missed. */
const NOT_RUN: Record<string, string> = {
  'POST /v1/asr': 'transcribes an upload; touches no table (modules/transcription has no repository)',
  // Not yet run: a scenario needs a provider's signed responses (test/services/authn/saml/test-idp.ts).
  'POST /server/saml2/assertion-consumer/{id}': 'SAML (AUTHN_SAML_PROVIDERS, off here): consumes a request id and signs an eperson in, like the OIDC callback; not yet placed in docs/scaling.md',
  'POST /server/saml2/single-logout/{id}': 'SAML (AUTHN_SAML_PROVIDERS, off here): ends the sessions of one eperson; not yet placed in docs/scaling.md',
}

const scaling = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8')

test('every write transaction stays within one distribution key', { skip: testDialect !== 'postgres' && 'PostgreSQL only (the distributed engines speak its SQL): npm run test:pg', timeout: 180_000 }, async (t) => {
  const traced = await startTracedApp(t, { AUTHN_ADMIN_EMAIL: 'admin@example.org', AUTHN_ADMIN_PASSWORD: 'correct horse battery' })
  await runWriteScenarios(traced)
  // The methods authn refuses on its token routes (403 without a CSRF token, 405 with one) write nothing.
  for (const path of ['authn/login', 'authn/logout', 'authn/shortlivedtokens']) {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const response = await traced.request({ method, url: `/server/api/${path}` })
      assert.ok(response.statusCode === 403 || response.statusCode === 405, `${method} ${path}: ${response.statusCode}`)
      assert.deepEqual(traced.traces.at(-1)?.changes, [], `${method} ${path} changes nothing`)
    }
  }

  // Every write route of the OpenAPI document ran (authn's /api twin of /server/api shares its handlers).
  const document = (await traced.app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> }
  const ran = new Set(traced.traces.map((trace) => trace.route.replace(/:(\w+)/g, '{$1}')))
  const missing: string[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations).map((name) => name.toUpperCase())) {
      if (['GET', 'HEAD', 'OPTIONS'].includes(method)) continue
      const route = `${method} ${path.replace(/^\/api\//, '/server/api/')}`
      if (!ran.has(route) && !(route in NOT_RUN)) missing.push(route)
    }
  }
  assert.deepEqual(missing, [], 'write routes no scenario runs')

  const crossing = new Map<string, string>()
  for (const trace of traced.traces) {
    // Rows changed by the request, per key: one value each (a failed login counts against the
    // account and the address, two throttle keys, in two transactions).
    const values = new Map<KeyKind, Set<string>>()
    for (const change of trace.changes) {
      if (!change.key) continue
      const set = values.get(change.key.kind) ?? new Set()
      set.add(change.key.value)
      values.set(change.key.kind, set)
    }
    for (const [kind, set] of values) assert.ok(set.size <= (kind === 'throttle key' ? 2 : 1), `${trace.route} changed rows of ${set.size} ${kind}s: ${[...set].join(', ')}`)

    for (const unit of unitsOf(trace.statements)) {
      const shapes = unit.map(shapeOf)
      // An Idempotency-Key's answer is written in the transaction it guards (issue 35), so it
      // rides along with whatever key that transaction has (docs/scaling.md: "Idempotency keys").
      const written = shapes.filter(
        (shape) => (shape.kind === 'insert' || shape.kind === 'update' || shape.kind === 'delete') && !(shape.tables[0] === 'payments_idempotency' && shapes.length > 1),
      )
      const kinds = new Set(
        written.flatMap((shape) => shape.tables.slice(0, 1)).flatMap((table) => {
          const placement = PLACEMENT[table]
          return placement === undefined || typeof placement === 'string' ? [] : [placement.key]
        }),
      )
      assert.ok(kinds.size <= 1, `${trace.route}: one transaction writes rows of ${[...kinds].join(' and ')}`)
      const keyValues = new Set(written.flatMap((shape) => shape.keys.map((key) => `${key.kind}=${key.value}`)))
      assert.ok(keyValues.size <= 1, `${trace.route}: one transaction writes ${[...keyValues].join(', ')}`)
      for (const [index, shape] of shapes.entries()) {
        const statement = unit[index]
        if (shape.crosses && statement) crossing.set(signatureOf(statement), `${trace.route}: ${shape.crosses}`)
      }
    }
  }
  const unlisted = [...crossing].filter(([signature]) => !scaling.includes(`\`${signature}\``)).map(([signature, why]) => `\`${signature}\` — ${why}`)
  assert.deepEqual(unlisted, [], 'statements that would cross shards, missing from docs/scaling.md')
})
