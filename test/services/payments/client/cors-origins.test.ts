import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp } from '../../../helpers/build-app.ts'

// The client API is called from shoppers' browsers on any merchant's site. CORS_ORIGINS opens
// the server's credentialed CORS to a few origins (a repository front end, say); it must not
// take over the client API's preflights, which would then refuse every merchant's site.
const REPOSITORY_UI = 'https://ui.example.org'
const SHOP = 'https://shop.example.com'

describe('the payments client API with CORS_ORIGINS set', () => {
  for (const url of ['/vault', '/payments']) {
    it(`answers a preflight of POST ${url} from any shop itself, not with the server's list`, async (t) => {
      const { app } = await buildTestApp(t, { env: { CORS_ORIGINS: REPOSITORY_UI } })
      const response = await app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'accept-version,content-type' },
      })
      assert.equal(response.statusCode, 204)
      assert.equal(response.headers['access-control-allow-origin'], '*')
      assert.equal(response.headers['access-control-allow-methods'], 'POST, OPTIONS')
      assert.match(String(response.headers['access-control-allow-headers']), /Accept-Version/)
      assert.equal(response.headers['access-control-allow-credentials'], undefined)
    })
  }

  it('answers a shop’s POST with its open CORS headers and no credentials', async (t) => {
    const { app } = await buildTestApp(t, { env: { CORS_ORIGINS: REPOSITORY_UI } })
    const response = await app.inject({ method: 'POST', url: '/vault', headers: { origin: SHOP, 'accept-version': '1' }, payload: {} })
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers['access-control-allow-origin'], '*')
    assert.equal(response.headers['access-control-allow-credentials'], undefined)
  })
})
