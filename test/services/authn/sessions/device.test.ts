import assert from 'node:assert/strict'
import { test } from 'node:test'
import { summariseUserAgent } from '../../../../src/services/authn/modules/sessions/device.ts'

test('a User-Agent is summarised as browser, major version and system', () => {
  const cases: Array<[string | undefined, string | null]> = [
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70', 'Edge 131 on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15', 'Safari 17 on macOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome 131 on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133 on Linux'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1', 'Chrome 131 on iOS'],
    ['curl/8.5.0', 'curl 8'],
    ['python-requests/2.32.3', 'Python requests 2'],
    ['DSpace-harvester/1.0 (+https://example.org)', 'DSpace-harvester'],
    ['', null],
    [undefined, null],
  ]
  for (const [userAgent, expected] of cases) assert.equal(summariseUserAgent(userAgent), expected, String(userAgent))
  assert.ok((summariseUserAgent('x'.repeat(1000)) ?? '').length <= 120)
})
