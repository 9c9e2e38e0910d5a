import assert from 'node:assert/strict'
import { test } from 'node:test'
import { authorize, merchantFixture } from './helpers.ts'

test('no bad input gets a 500: every payments route against malformed bodies, queries and ids', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  const m = fixture.merchant.id
  const posts = [
    '/apps',
    '/merchants',
    `/merchants/${m}/users`,
    `/merchants/${m}/apps`,
    `/merchants/${m}/transactions`,
    `/merchants/${m}/cards`,
    `/transactions/${id}/captures`,
    `/transactions/${id}/refunds`,
    `/transactions/${id}/voids`,
  ]
  const bodies: Array<{ payload: string; type: string }> = [
    { payload: '[]', type: 'application/json' },
    { payload: '"text"', type: 'application/json' },
    { payload: 'null', type: 'application/json' },
    { payload: '{"amount":1e400}', type: 'application/json' },
    { payload: '{"amount":9007199254740993,"currency":"EUR"}', type: 'application/json' },
    { payload: '{"amount":{"$gt":0}}', type: 'application/json' },
    { payload: '{"__proto__":{"x":1},"amount":1}', type: 'application/json' },
    { payload: '{"transactionId":["a"],"currency":"EUR","amount":1}', type: 'application/json' },
    { payload: '{"custom":"x","transactionId":"\\u0000","currency":"EUR","amount":1}', type: 'application/json' },
    { payload: 'amount[]=1&amount[]=2', type: 'application/x-www-form-urlencoded' },
    { payload: 'company[country][x]=DK&email=a', type: 'application/x-www-form-urlencoded' },
    { payload: '<xml/>', type: 'application/xml' },
    { payload: '{', type: 'application/vnd.api+json' },
  ]
  for (const url of posts) {
    for (const body of bodies) {
      const response = await fixture.app.inject({ method: 'POST', url, headers: { ...fixture.headers, 'content-type': body.type }, payload: body.payload })
      assert.ok(response.statusCode < 500, `POST ${url} ${body.payload} → ${response.statusCode} ${response.body}`)
      assert.doesNotThrow(() => JSON.parse(response.body || 'null'), `${url}: JSON body`)
    }
  }
  const gets = [
    `/identities/${fixture.owner.id}/merchants`,
    `/merchants/${m}/users`,
    `/merchants/${m}/apps`,
    `/merchants/${m}/lines`,
    `/merchants/${m}/transactions`,
    '/disputes',
    '/frauds',
  ]
  const queries = [
    '?limit=-1',
    '?limit=1.5',
    `?limit=10&before=${'f'.repeat(300)}`,
    '?limit=10&after[]=x',
    '?limit[]=1&limit[]=2',
    `?limit=5&filter[merchantId]=${m}&filter[merchantId]=${m}`,
  ]
  for (const url of gets) {
    for (const query of queries) {
      const response = await fixture.call('GET', url + query)
      assert.ok(response.statusCode < 500, `GET ${url}${query} → ${response.statusCode} ${response.body}`)
    }
  }
  for (const weird of ['%00', '%E0%A4%A', 'a'.repeat(2000), '..%2F..%2Fetc']) {
    for (const url of [`/transactions/${weird}`, `/merchants/${weird}`, `/lines/${weird}`, `/cards/${weird}`, `/disputes/${weird}`, `/frauds/${weird}`]) {
      const response = await fixture.call('GET', url)
      assert.ok(response.statusCode < 500 && response.statusCode >= 400, `GET ${url} → ${response.statusCode}`)
    }
  }
  const put = await fixture.app.inject({
    method: 'PUT',
    url: `/merchants/${m}`,
    headers: { ...fixture.headers, 'content-type': 'application/json' },
    payload: '[1,2]',
  })
  assert.equal(put.statusCode, 400)
})
