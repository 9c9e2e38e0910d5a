import assert from 'node:assert/strict'
import { test } from 'node:test'
import { timeOrderedIdAt } from '../../../src/core/ids.ts'
import { hashKey } from '../../../src/services/payments/modules/apps/index.ts'
import { basic, createApp, createMerchant, merchantFixture, paymentsApp, parseList } from './helpers.ts'

test('POST /apps needs no credentials, ignores a junk Basic header, and shows the key once', async (t) => {
  const { app, db } = await paymentsApp(t)
  const plain = await app.inject({ method: 'POST', url: '/apps', payload: { name: 'A' } })
  assert.equal(plain.statusCode, 201)
  assert.match(plain.headers['content-type'] as string, /^application\/json/)
  assert.ok(!plain.body.includes('\n'), 'single objects are compact')
  const { app: created } = plain.json()
  assert.match(created.id, /^[0-9a-f]{24}$/)
  assert.match(created.key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.equal(created.name, 'A')

  const junk = await app.inject({
    method: 'POST',
    url: '/apps',
    headers: { authorization: 'Basic OnVuZGVmaW5lZA==', 'content-type': 'application/json' },
    payload: '',
  })
  assert.equal(junk.statusCode, 201, junk.body)
  assert.equal(junk.json().app.name, undefined)

  const stored = await db.selectFrom('payments_apps').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
  assert.equal(stored.key_hash, hashKey(created.key))
  assert.ok(!JSON.stringify(stored).includes(created.key), 'the key itself is never stored')
})

test('GET /me answers the identity; no key or an unknown key is 401', async (t) => {
  const { app } = await paymentsApp(t)
  const me = await createApp(app, 'Me')
  const ok = await app.inject({ url: '/me', headers: { authorization: basic(me.key) } })
  assert.equal(ok.statusCode, 200)
  assert.deepEqual(ok.json(), { identity: { id: me.id, name: 'Me', created: '2026-01-01T00:00:00.000Z' } })
  for (const authorization of [undefined, basic('bogus'), 'Bearer x', 'Basic !!!']) {
    const denied = await app.inject({ url: '/me', headers: authorization ? { authorization } : {} })
    assert.equal(denied.statusCode, 401, String(authorization))
    assert.equal(denied.json().code, 'unauthorized')
  }
})

test('ids are 24-hex and start with the Unix seconds of their creation', async (t) => {
  const { app, clock } = await paymentsApp(t)
  clock.set('2026-03-04T05:06:07.890Z')
  const created = await createApp(app)
  assert.equal(created.id.slice(0, 8), Math.floor(Date.parse('2026-03-04T05:06:07Z') / 1000).toString(16))
})

test('lists use the line-per-item layout; an empty list is "[\\n]"', async (t) => {
  const { app, owner, call } = await merchantFixture(t)
  await createMerchant(app, owner.key, { name: 'Second' })
  const list = await call('GET', `/identities/${owner.id}/merchants?limit=10`)
  assert.equal(list.statusCode, 200)
  assert.match(list.headers['content-type'] as string, /^application\/json/)
  const items = parseList(list)
  assert.equal(items.length, 2)
  assert.equal(list.body, `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]`)
  const other = await createApp(app)
  const empty = await app.inject({ url: `/identities/${other.id}/merchants?limit=5`, headers: { authorization: basic(other.key) } })
  assert.equal(empty.body, '[\n]')
})

test('pagination: limit required (1..1000), before newest-first, after alone oldest-first, both an open interval', async (t) => {
  const { app, owner, merchant, clock, call } = await merchantFixture(t)
  const ids = [merchant.id]
  for (let index = 0; index < 4; index++) {
    clock.advance(1000)
    ids.push((await createMerchant(app, owner.key, { name: `m${index}` })).id)
  }
  const [t1, t2, t3, t4, t5] = ids as [string, string, string, string, string]
  const page = async (query: string) => {
    const response = await call('GET', `/identities/${owner.id}/merchants?${query}`)
    assert.equal(response.statusCode, 200, response.body)
    return parseList<{ id: string }>(response).map((item) => item.id)
  }
  assert.deepEqual(await page('limit=3'), [t5, t4, t3])
  assert.deepEqual(await page(`before=${t3}&limit=2`), [t2, t1])
  assert.deepEqual(await page(`after=${t3}&limit=2`), [t4, t5])
  assert.deepEqual(await page(`after=${t1}&before=${t5}&limit=10`), [t4, t3, t2])
  assert.deepEqual(await page(`after=${timeOrderedIdAt(new Date('2026-01-01T00:00:02.500Z'))}&limit=10`), [t3, t4, t5])
  assert.deepEqual(await page('limit=10&filter[test]=y'), [t5, t4, t3, t2, t1])
  assert.deepEqual(await page('limit=10&filter[test]=1&sort=-id'), [t5, t4, t3, t2, t1])
  assert.deepEqual(await page('limit=10&filter[test]=n'), [])
  const live = await createMerchant(app, owner.key, { test: false })
  assert.deepEqual(await page('limit=10&filter[test]=no'), [live.id])
  const badFilter = await call('GET', `/identities/${owner.id}/merchants?limit=10&filter[test]=maybe`)
  assert.equal(badFilter.statusCode, 400)
  assert.deepEqual(badFilter.json(), [{ field: 'filter[test]', message: 'must be y or n' }])
  assert.equal((await page('limit=1000')).length, 6)

  for (const query of ['', 'limit=0', 'limit=1001', 'limit=abc']) {
    const bad = await call('GET', `/identities/${owner.id}/merchants?${query}`)
    assert.equal(bad.statusCode, 400, query)
    assert.deepEqual(
      bad.json().map((problem: { field: string }) => problem.field),
      ['limit'],
    )
  }
})
