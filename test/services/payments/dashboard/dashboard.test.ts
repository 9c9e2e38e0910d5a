import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { authorize, basic, createApp, createMerchant, type PaymentsTestApp, paymentsApp, parseList } from '../helpers.ts'

// One app (one database) for the file, to keep its time small on PostgreSQL; each test makes an
// app and a merchant of its own on it, and reads only what those own.
// `after` at the top of the file closes it when the file's tests are done.
const shared: PaymentsTestApp = await paymentsApp({ after })

/** A fresh app with a key, a test EUR merchant, and helpers bound to them, on the file's app. */
async function fresh() {
  const test = shared
  const owner = await createApp(test.app, 'Owner')
  const merchant = await createMerchant(test.app, owner.key)
  const headers = { authorization: basic(owner.key) }
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    test.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  const sessionsOfOwner = () => test.db.selectFrom('payments_dashboard_sessions').selectAll().where('app_id', '=', owner.id).execute()
  return { ...test, owner, merchant, headers, call, sessionsOfOwner }
}

type Fixture = Awaited<ReturnType<typeof fresh>>

/** The session cookie a sign-in set (name=value), asserted HttpOnly, SameSite=Strict, Path=/. */
function sessionCookie(response: LightMyRequestResponse): string {
  const header = [response.headers['set-cookie']].flat().find((value) => value?.startsWith('triad_dashboard='))
  assert.ok(header, 'a session cookie is set')
  assert.match(header, /; HttpOnly/i)
  assert.match(header, /; SameSite=Strict/i)
  assert.match(header, /; Path=\//i)
  return header.split(';')[0]
}

async function signIn(fixture: Fixture, key = fixture.owner.key) {
  const response = await fixture.app.inject({ method: 'POST', url: '/dashboard/session', payload: { key } })
  assert.equal(response.statusCode, 201, response.body)
  const session = response.json().session as { app: { id: string; name?: string }; expires: string; csrfToken: string }
  return { cookie: sessionCookie(response), session, response }
}

test('GET /dashboard is an HTML page in English or Danish (Accept-Language, ?lang), with its own script and styles and a strict CSP', async () => {
  const fixture = await fresh()
  const english = await fixture.app.inject({ url: '/dashboard' })
  assert.equal(english.statusCode, 200)
  assert.match(String(english.headers['content-type']), /^text\/html/)
  assert.match(english.body, /<html lang="en">/)
  assert.match(english.body, /<title>Merchant dashboard – Triad Payments<\/title>/)
  assert.match(english.body, /<label for="api-key">API key<\/label>/)
  const csp = String(english.headers['content-security-policy'])
  assert.match(csp, /script-src 'self'/)
  assert.match(csp, /connect-src 'self'/)
  assert.match(csp, /frame-ancestors 'none'/)
  assert.doesNotMatch(english.body, /<script>(?!\s*$)/, 'no inline script runs')

  const danish = await fixture.app.inject({ url: '/dashboard', headers: { 'accept-language': 'da-DK,da;q=0.9,en;q=0.5' } })
  assert.match(danish.body, /<html lang="da">/)
  assert.match(danish.body, /<label for="api-key">API-nøgle<\/label>/)
  assert.match(danish.body, /<a href="\/dashboard\?lang=da" lang="da" hreflang="da" aria-current="true">Dansk<\/a>/)
  const switched = await fixture.app.inject({ url: '/dashboard?lang=en', headers: { 'accept-language': 'da' } })
  assert.match(switched.body, /<html lang="en">/)

  for (const [path, type] of [
    ['/dashboard/assets/dashboard.js', /javascript/],
    ['/dashboard/assets/dashboard.css', /text\/css/],
  ] as const) {
    const asset = await fixture.app.inject({ url: path })
    assert.equal(asset.statusCode, 200, path)
    assert.match(String(asset.headers['content-type']), type)
  }
  assert.equal((await fixture.app.inject({ url: '/dashboard/assets/nothing.js' })).statusCode, 404)
})

test('the page loads its script as an ES module, and every module that script imports is served as JavaScript from this origin', async () => {
  const page = await shared.app.inject({ url: '/dashboard' })
  assert.match(page.body, /<script type="module" src="\/dashboard\/assets\/dashboard\.js"><\/script>/)
  // Module scripts are fetched in CORS mode and refused unless served with a JavaScript type; the
  // CSP (script-src 'self') admits only this origin, so every import must be a file beside it.
  const served = new Set<string>()
  const queue = ['dashboard.js']
  for (let name = queue.shift(); name !== undefined && served.size < 100; name = queue.shift()) {
    if (served.has(name)) continue
    served.add(name)
    const module = await shared.app.inject({ url: `/dashboard/assets/${name}` })
    assert.equal(module.statusCode, 200, name)
    assert.match(String(module.headers['content-type']), /^(text|application)\/javascript\b/, name)
    for (const [, specifier] of module.body.matchAll(/^import\s(?:[^'"]*\sfrom\s)?['"]([^'"]+)['"]/gm)) {
      assert.match(specifier, /^\.\/[a-z][a-z-]*\.js$/, `${name} imports ${specifier}: only modules beside it`)
      queue.push(specifier.slice(2))
    }
  }
  assert.ok(served.size > 1 && served.has('transaction-actions.js'), `the script is split into modules: ${[...served].join(', ')}`)
})

test('signing in trades the API key for an HttpOnly session cookie; the key is stored nowhere, the token only hashed', async () => {
  const fixture = await fresh()
  const { cookie, session, response } = await signIn(fixture)
  assert.equal(session.app.id, fixture.owner.id)
  assert.equal(session.app.name, 'Owner')
  assert.equal(session.expires, new Date(fixture.clock.now().getTime() + 8 * 3600_000).toISOString())
  assert.match(session.csrfToken, /^[A-Za-z0-9_-]{43}$/)
  assert.ok(!cookie.includes(fixture.owner.key) && !response.body.includes(fixture.owner.key), 'the key is never echoed')
  assert.equal(response.headers['cache-control'], 'no-store')
  const token = cookie.split('=')[1]
  const rows = await fixture.sessionsOfOwner()
  assert.equal(rows.length, 1)
  assert.equal(rows[0].token_hash, createHash('sha256').update(token).digest('hex'))
  assert.equal(rows[0].app_id, fixture.owner.id)

  const current = await fixture.app.inject({ url: '/dashboard/session', headers: { cookie } })
  assert.equal(current.statusCode, 200)
  assert.deepEqual(current.json().session, session)
  const merchant = await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}`, headers: { cookie } })
  assert.equal(merchant.statusCode, 200)
  assert.equal(merchant.json().merchant.id, fixture.merchant.id)
})

test('sign-in refusals: unknown key 401, missing key 400, a request from another site 403, all in the payments error shape', async () => {
  const fixture = await fresh()
  const unknown = await fixture.app.inject({ method: 'POST', url: '/dashboard/session', payload: { key: 'not-a-key' } })
  assert.equal(unknown.statusCode, 401)
  assert.deepEqual(unknown.json(), { code: 'unauthorized', message: 'Unknown API key' })
  assert.equal(unknown.headers['set-cookie'], undefined)
  assert.equal(unknown.headers['www-authenticate'], undefined, 'no browser password dialog')

  const missing = await fixture.app.inject({ method: 'POST', url: '/dashboard/session', payload: {} })
  assert.equal(missing.statusCode, 400)
  assert.deepEqual(missing.json(), [{ field: 'key', message: 'is required' }])

  for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }, { origin: 'null' }]) {
    const refused = await fixture.app.inject({ method: 'POST', url: '/dashboard/session', headers, payload: { key: fixture.owner.key } })
    assert.equal(refused.statusCode, 403, JSON.stringify(headers))
    assert.equal(refused.json().code, 'forbidden')
    assert.equal(refused.headers['set-cookie'], undefined)
  }
  const sameOrigin = await fixture.app.inject({
    method: 'POST',
    url: '/dashboard/session',
    headers: { origin: 'http://shop.example:8080', host: 'shop.example:8080', 'sec-fetch-site': 'same-origin' },
    payload: { key: fixture.owner.key },
  })
  assert.equal(sameOrigin.statusCode, 201, sameOrigin.body)

  const signedOut = await fixture.app.inject({ url: '/dashboard/session' })
  assert.equal(signedOut.statusCode, 401)
  assert.equal(signedOut.json().code, 'unauthorized')
})

test('with the cookie, reads need nothing more; a capture, refund, void or sign-out needs the CSRF token (403 without or with a wrong one)', async () => {
  const fixture = await fresh()
  const { cookie, session } = await signIn(fixture)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  const post = (url: string, headers: Record<string, string>, payload: Record<string, unknown> = { amount: 100 }) =>
    fixture.app.inject({ method: 'POST', url, headers: { cookie, ...headers }, payload })

  const refusedHeaders: Array<Record<string, string>> = [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': session.csrfToken.slice(1) }]
  for (const headers of refusedHeaders) {
    for (const kind of ['captures', 'refunds', 'voids']) {
      const refused = await post(`/transactions/${id}/${kind}`, headers)
      assert.equal(refused.statusCode, 403, `${kind} ${JSON.stringify(headers)}`)
      assert.equal(refused.json().code, 'forbidden')
      assert.match(refused.json().message, /CSRF/)
    }
    const signOut = await fixture.app.inject({ method: 'DELETE', url: '/dashboard/session', headers: { cookie, ...headers } })
    assert.equal(signOut.statusCode, 403)
  }
  const untouched = (await fixture.call('GET', `/transactions/${id}`)).json().transaction
  assert.equal(untouched.capturedAmount, 0)
  assert.equal(untouched.voidedAmount, 0)

  const capture = await post(`/transactions/${id}/captures`, { 'x-csrf-token': session.csrfToken, 'idempotency-key': 'dash-1' }, { amount: 400 })
  assert.equal(capture.statusCode, 201, capture.body)
  const replay = await post(`/transactions/${id}/captures`, { 'x-csrf-token': session.csrfToken, 'idempotency-key': 'dash-1' }, { amount: 400 })
  assert.equal(replay.statusCode, 201)
  assert.equal(replay.json().transaction.capturedAmount, 400, 'the idempotency key replays for the session too')
  const refund = await post(`/transactions/${id}/refunds`, { 'x-csrf-token': session.csrfToken }, { amount: 150 })
  assert.equal(refund.statusCode, 201, refund.body)
  assert.equal(refund.json().transaction.refundedAmount, 150)

  // Basic authorization wins over a cookie and needs no CSRF token (servers have no cookies).
  const basicCapture = await fixture.app.inject({ method: 'POST', url: `/transactions/${id}/captures`, headers: { cookie, authorization: basic(fixture.owner.key) }, payload: { amount: 100 } })
  assert.equal(basicCapture.statusCode, 201)
})

test('a session reaches only its app’s merchants: another merchant 403, an unknown one 404; it ends after its lifetime and at sign-out', async () => {
  const fixture = await fresh()
  const stranger = await createApp(fixture.app, 'Stranger')
  const foreign = await createMerchant(fixture.app, stranger.key)
  const foreignTransaction = await authorize(fixture, foreign.id)
  const { cookie, session } = await signIn(fixture)
  const get = (url: string, headers: Record<string, string> = {}) => fixture.app.inject({ url, headers: { cookie, ...headers } })

  assert.equal((await get(`/merchants/${foreign.id}`)).statusCode, 403)
  assert.equal((await get(`/merchants/${foreign.id}/transactions?limit=5`)).statusCode, 403)
  assert.equal((await get(`/merchants/${foreign.id}/volume`)).statusCode, 403)
  assert.equal((await get(`/transactions/${foreignTransaction}`)).statusCode, 403)
  const capture = await fixture.app.inject({ method: 'POST', url: `/transactions/${foreignTransaction}/captures`, headers: { cookie, 'x-csrf-token': session.csrfToken }, payload: { amount: 1 } })
  assert.equal(capture.statusCode, 403)
  const unknown = await get('/merchants/0000000000000000000000ff')
  assert.equal(unknown.statusCode, 404)
  assert.equal(unknown.json().code, 'not_found')

  // Lifetime (PAYMENTS_DASHBOARD_SESSION_TTL, 8 h): the last millisecond still works.
  fixture.clock.advance(8 * 3600_000 - 1)
  assert.equal((await get(`/merchants/${fixture.merchant.id}`)).statusCode, 200)
  fixture.clock.advance(1)
  const ended = await get(`/merchants/${fixture.merchant.id}`)
  assert.equal(ended.statusCode, 401)
  assert.deepEqual(ended.json(), { code: 'unauthorized', message: 'The dashboard session has ended; sign in again' })
  assert.equal(ended.headers['www-authenticate'], undefined, 'no browser password dialog')
  assert.equal((await get('/dashboard/session')).statusCode, 401)
  // A new sign-in of the app drops its expired sessions.
  const again = await signIn(fixture)
  assert.equal((await fixture.sessionsOfOwner()).length, 1)

  const signOut = await fixture.app.inject({ method: 'DELETE', url: '/dashboard/session', headers: { cookie: again.cookie, 'x-csrf-token': again.session.csrfToken } })
  assert.equal(signOut.statusCode, 204)
  assert.match(String(signOut.headers['set-cookie']), /^triad_dashboard=; .*Expires=Thu, 01 Jan 1970/)
  assert.equal((await fixture.sessionsOfOwner()).length, 0)
  assert.equal((await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}`, headers: { cookie: again.cookie } })).statusCode, 401)
  const anonymous = await fixture.app.inject({ method: 'DELETE', url: '/dashboard/session' })
  assert.equal(anonymous.statusCode, 401)
})

test('the transactions list filters by status, currency, amount, date, card last 4 and search, with cursor pages', async () => {
  const fixture = await fresh()
  const m = fixture.merchant.id
  const day = (iso: string) => fixture.clock.set(iso)
  day('2026-03-01T10:00:00.000Z')
  const authorizedOnly = await authorize(fixture, m, { amount: 500, last4: '4242', custom: { reference: 'Order-77' } })
  day('2026-03-01T11:00:00.000Z')
  const partVoided = await authorize(fixture, m, { amount: 800, last4: '9999' })
  day('2026-03-02T10:00:00.000Z')
  const captured = await authorize(fixture, m, { amount: 1500, last4: '1111' })
  day('2026-03-03T23:59:59.000Z')
  const refunded = await authorize(fixture, m, { amount: 2500, currency: 'DKK', last4: '1111' })
  day('2026-03-04T00:00:00.000Z')
  const voided = await authorize(fixture, m, { amount: 3500, last4: '5555' })
  for (const [id, kind, amount] of [[captured, 'captures', 1000], [refunded, 'captures', 2500], [refunded, 'refunds', 100], [voided, 'voids', 3500], [partVoided, 'voids', 300]] as const) {
    assert.equal((await fixture.call('POST', `/transactions/${id}/${kind}`, { amount })).statusCode, 201)
  }
  await fixture.db.updateTable('payments_transactions').set({ descriptor: 'Spring 100% sale' }).where('id', '=', voided).execute()

  const ids = async (filters: string) => {
    const response = await fixture.call('GET', `/merchants/${m}/transactions?limit=10${filters}`)
    assert.equal(response.statusCode, 200, `${filters}: ${response.body}`)
    return parseList<{ id: string }>(response).map((item) => item.id)
  }
  assert.deepEqual(await ids(''), [voided, refunded, captured, partVoided, authorizedOnly])
  assert.deepEqual(await ids('&filter[status]=authorized'), [partVoided, authorizedOnly], 'partly voided, the rest still pending')
  assert.deepEqual(await ids('&filter[status]=captured'), [captured])
  assert.deepEqual(await ids('&filter[status]=refunded'), [refunded])
  assert.deepEqual(await ids('&filter[status]=voided'), [voided], 'all of it voided')
  assert.deepEqual(await ids('&filter[status]=declined'), [])
  assert.deepEqual(await ids('&filter[currency]=DKK'), [refunded])
  assert.deepEqual(await ids('&filter[amountMin]=1500&filter[amountMax]=2500'), [refunded, captured])
  assert.deepEqual(await ids('&filter[amountMax]=499'), [])
  assert.deepEqual(await ids('&filter[createdFrom]=2026-03-02&filter[createdTo]=2026-03-03'), [refunded, captured], 'whole UTC days, both included')
  assert.deepEqual(await ids('&filter[createdFrom]=2026-03-03T23:59:59Z'), [voided, refunded])
  assert.deepEqual(await ids('&filter[createdTo]=2026-03-03T23:59:58.999Z'), [captured, partVoided, authorizedOnly])
  assert.deepEqual(await ids('&filter[last4]=1111'), [refunded, captured])
  assert.deepEqual(await ids(`&filter[search]=${captured}`), [captured])
  assert.deepEqual(await ids('&filter[search]=order-77'), [authorizedOnly], 'custom data, case-insensitive')
  assert.deepEqual(await ids('&filter[search]=100%25'), [voided], '% is taken literally')
  assert.deepEqual(await ids('&filter[search]=_'), [], '_ is taken literally')
  assert.deepEqual(await ids('&filter[last4]=1111&filter[status]=refunded&filter[currency]=DKK'), [refunded])
  // Cursor pages with filters: newest first, then `before` the last one.
  const first = await fixture.call('GET', `/merchants/${m}/transactions?limit=1&filter[last4]=1111`)
  assert.deepEqual(parseList<{ id: string }>(first).map((item) => item.id), [refunded])
  const next = await fixture.call('GET', `/merchants/${m}/transactions?limit=1&filter[last4]=1111&before=${refunded}`)
  assert.deepEqual(parseList<{ id: string }>(next).map((item) => item.id), [captured])
  const nested = await fixture.call('GET', `/merchants/${m}/transactions?limit=10&filter%5Bstatus%5D=voided`)
  assert.deepEqual(parseList<{ id: string }>(nested).map((item) => item.id), [voided])
})

test('bad transaction filters are 400s naming the filter', async () => {
  const fixture = await fresh()
  const cases: Array<[string, string]> = [
    ['filter[status]=shipped', 'filter[status]'],
    ['filter[currency]=eur', 'filter[currency]'],
    ['filter[amountMin]=1.5', 'filter[amountMin]'],
    ['filter[amountMax]=-1', 'filter[amountMax]'],
    ['filter[amountMin]=10&filter[amountMax]=9', 'filter[amountMax]'],
    ['filter[createdFrom]=2026-02-30', 'filter[createdFrom]'],
    ['filter[createdTo]=yesterday', 'filter[createdTo]'],
    ['filter[createdFrom]=2026-03-02&filter[createdTo]=2026-03-01', 'filter[createdTo]'],
    ['filter[last4]=12a4', 'filter[last4]'],
    [`filter[search]=${'x'.repeat(101)}`, 'filter[search]'],
    ['filter[successful]=maybe', 'filter[successful]'],
  ]
  for (const [filter, field] of cases) {
    const response = await fixture.call('GET', `/merchants/${fixture.merchant.id}/transactions?limit=5&${filter}`)
    assert.equal(response.statusCode, 400, filter)
    const body = response.json() as Array<{ field: string; message: string }>
    assert.equal(body[0].field, field, filter)
    assert.ok(body[0].message.length > 0)
  }
  const anonymous = await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}/transactions?limit=5&filter[status]=voided` })
  assert.equal(anonymous.statusCode, 401)
})

test('GET /merchants/{id}/volume sums authorizations, captures and refunds per currency and UTC day, every day of the period, with today', async () => {
  const fixture = await fresh()
  const m = fixture.merchant.id
  fixture.clock.set('2026-03-01T09:00:00.000Z')
  const a = await authorize(fixture, m, { amount: 1000 })
  await authorize(fixture, m, { amount: 250 })
  fixture.clock.set('2026-03-03T12:00:00.000Z')
  const b = await authorize(fixture, m, { amount: 700, currency: 'DKK' })
  assert.equal((await fixture.call('POST', `/transactions/${a}/captures`, { amount: 600 })).statusCode, 201)
  assert.equal((await fixture.call('POST', `/transactions/${b}/captures`, { amount: 700 })).statusCode, 201)
  assert.equal((await fixture.call('POST', `/transactions/${a}/refunds`, { amount: 100 })).statusCode, 201)
  assert.equal((await fixture.call('POST', `/transactions/${a}/voids`, { amount: 400 })).statusCode, 201)
  await fixture.db.updateTable('payments_transactions').set({ successful: 0 }).where('id', '=', await authorize(fixture, m, { amount: 99_999 })).execute()

  const response = await fixture.call('GET', `/merchants/${m}/volume?from=2026-03-01&to=2026-03-03`)
  assert.equal(response.statusCode, 200, response.body)
  const volume = response.json().volume
  assert.equal(volume.from, '2026-03-01')
  assert.equal(volume.to, '2026-03-03')
  assert.equal(volume.today, '2026-03-03')
  assert.deepEqual(
    volume.currencies.map((entry: { currency: string }) => entry.currency),
    ['DKK', 'EUR'],
  )
  const [dkk, eur] = volume.currencies
  assert.deepEqual({ ...eur, days: undefined }, { currency: 'EUR', exponent: 2, count: 2, authorized: 1250, captured: 600, refunded: 100, today: { count: 0, authorized: 0, captured: 600, refunded: 100 }, days: undefined })
  assert.deepEqual(eur.days, [
    { date: '2026-03-01', count: 2, authorized: 1250, captured: 0, refunded: 0 },
    { date: '2026-03-02', count: 0, authorized: 0, captured: 0, refunded: 0 },
    { date: '2026-03-03', count: 0, authorized: 0, captured: 600, refunded: 100 },
  ])
  assert.deepEqual(dkk.today, { count: 1, authorized: 700, captured: 700, refunded: 0 }, 'the declined one is not volume')

  const defaults = (await fixture.call('GET', `/merchants/${m}/volume`)).json().volume
  assert.equal(defaults.to, '2026-03-03')
  assert.equal(defaults.from, '2026-02-02')
  assert.equal(defaults.currencies[1].days.length, 30)
  const empty = (await fixture.call('GET', `/merchants/${m}/volume?from=2025-01-01&to=2025-01-31`)).json().volume
  assert.deepEqual(empty.currencies, [])

  for (const [query, field] of [
    ['from=2026-03-04&to=2026-03-03', 'from'],
    ['from=2025-01-01&to=2026-03-03', 'from'],
    ['to=2026-02-30', 'to'],
    ['from=03/01/2026', 'from'],
  ]) {
    const bad = await fixture.call('GET', `/merchants/${m}/volume?${query}`)
    assert.equal(bad.statusCode, 400, query)
    assert.equal(bad.json()[0].field, field, query)
  }
  assert.equal((await fixture.app.inject({ url: `/merchants/${m}/volume` })).statusCode, 401)
  assert.equal((await fixture.call('GET', '/merchants/0000000000000000000000ff/volume')).statusCode, 404)
})

test('GET /merchants/{id}/events?filter[deliveryStatus]=failed lists only events with a delivery given up; a bad status is a 400', async () => {
  const fixture = await fresh()
  const m = fixture.merchant.id
  const hook = await fixture.call('POST', `/merchants/${m}/webhooks`, { url: 'http://127.0.0.1:9/hooks', events: ['*'] })
  assert.equal(hook.statusCode, 201, hook.body)
  const first = await authorize(fixture, m)
  const second = await authorize(fixture, m)
  const failedEvent = await fixture.db.selectFrom('payments_events').select('id').where('subject_id', '=', first).executeTakeFirstOrThrow()
  await fixture.db.updateTable('payments_event_deliveries').set({ status: 'failed', last_error: 'HTTP 500' }).where('event_id', '=', failedEvent.id).execute()

  const list = async (query: string) => parseList<{ id: string; data: { id: string } }>(await fixture.call('GET', `/merchants/${m}/events?limit=10${query}`))
  assert.deepEqual((await list('&filter[deliveryStatus]=failed')).map((event) => event.data.id), [first])
  assert.deepEqual((await list('&filter[deliveryStatus]=pending')).map((event) => event.data.id), [second])
  assert.deepEqual((await list('&filter[deliveryStatus]=failed&filter[transactionId]=' + second)).length, 0)
  const bad = await fixture.call('GET', `/merchants/${m}/events?limit=10&filter[deliveryStatus]=lost`)
  assert.equal(bad.statusCode, 400)
  assert.match(bad.json()[0].field, /filter\[deliveryStatus\]/)
})
