import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp } from '../../../helpers/build-app.ts'

describe('GET /avatar', () => {
  it('serves the page with its own assets only, under a strict content security policy', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const page = await app.inject({ method: 'GET', url: '/avatar' })
    assert.equal(page.statusCode, 200)
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'; script-src 'self'/)
    // No external URL anywhere in the page.
    assert.doesNotMatch(page.body, /(src|href)="(https?:)?\/\//)
    for (const [url, type] of [
      ['/avatar/assets/avatar.css', 'text/css; charset=utf-8'],
      ['/avatar/assets/avatar.js', 'text/javascript; charset=utf-8'],
      ['/avatar/assets/recorder-worklet.js', 'text/javascript; charset=utf-8'],
    ]) {
      assert.ok(page.body.includes(url) || url.includes('worklet'), `${url} is linked`)
      const asset = await app.inject({ method: 'GET', url })
      assert.equal(asset.statusCode, 200)
      assert.equal(asset.headers['content-type'], type)
      assert.doesNotMatch(asset.body, /https?:\/\/(?!www\.w3\.org)/)
      const again = await app.inject({ method: 'GET', url, headers: { 'if-none-match': String(asset.headers.etag) } })
      assert.equal(again.statusCode, 304)
    }
  })

  it('answers 404 for an asset that does not exist, and never serves files by path', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    for (const url of ['/avatar/assets/nope.js', '/avatar/assets/..%2F..%2Fapp.ts', '/avatar/assets/avatar.html']) {
      const response = await app.inject({ method: 'GET', url })
      assert.equal(response.statusCode, 404, url)
    }
  })
})
