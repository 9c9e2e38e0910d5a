import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { merchantApiTour } from '../../examples/merchant-api.ts'
import { CLIENT_TYPES_PATH, renderClientTypes } from '../../scripts/generate-client.ts'
import { REQUIRES_SETTING } from '../../src/core/http/behind-setting.ts'
import { buildTestApp, engineIndependent } from '../helpers/build-app.ts'

type Operations = Record<string, Record<string, { description?: string; [REQUIRES_SETTING]?: string }>>

const operationsOf = async (app: { inject: (url: string) => Promise<{ json: () => { paths: Operations } }> }) => (await app.inject('/docs/json')).json().paths
const signatures = (paths: Operations) => Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)).sort()

test('the committed client types are those of the document the server builds (else: npm run client:generate)', { skip: engineIndependent }, async () => {
  assert.equal(readFileSync(CLIENT_TYPES_PATH, 'utf8'), await renderClientTypes(), 'clients/typescript/openapi.d.ts is stale: run `npm run client:generate`')
})

test('/docs lists the routes behind a setting while it is off, naming the setting; called, they answer 404 in the DSpace body saying which', async (t) => {
  const off = await buildTestApp(t, { services: ['authn'] })
  const on = await buildTestApp(t, {
    services: ['authn'],
    env: {
      AUTHN_PASSKEY_RP_ID: 'repo.example.org',
      AUTHN_SHIBBOLETH: 'true',
      AUTHN_TRUSTED_PROXIES: '127.0.0.1',
      AUTHN_OIDC_ISSUER: 'https://idp.example.org',
      AUTHN_OIDC_CLIENT_ID: 'triad',
      AUTHN_OIDC_CLIENT_SECRET: 'secret',
    },
  })
  const offPaths = await operationsOf(off.app)
  // Every operation the configured server serves is in the document of the unconfigured one.
  assert.deepEqual(signatures(offPaths), signatures(await operationsOf(on.app)))

  const expected = {
    '/api/authn/passkeys': ['get', 'AUTHN_PASSKEY_RP_ID'],
    '/server/api/authn/passkeys/login': ['post', 'AUTHN_PASSKEY_RP_ID'],
    '/api/authn/oidc': ['get', 'AUTHN_OIDC_ISSUER or AUTHN_OIDC_PRESET'],
    '/api/authn/shibboleth': ['get', 'AUTHN_SHIBBOLETH=true'],
    '/server/saml2/authenticate/{id}': ['get', 'AUTHN_SAML_PROVIDERS'],
  } as const
  for (const [path, [method, setting]] of Object.entries(expected)) {
    const operation = offPaths[path]?.[method]
    assert.ok(operation, `${method} ${path} documented while off`)
    assert.equal(operation[REQUIRES_SETTING], setting)
    assert.match(String(operation.description), new RegExp(`Switched on by ${setting}`))
  }
  // Routes that need no setting carry no mark.
  assert.equal(offPaths['/api/authn/login']?.post?.[REQUIRES_SETTING], undefined)

  const calls = [
    ['GET', '/api/authn/passkeys', 'Passkey routes are switched off on this server: set AUTHN_PASSKEY_RP_ID to turn them on'],
    ['GET', '/api/authn/oidc', 'OpenID Connect sign-on routes are switched off on this server: set AUTHN_OIDC_ISSUER or AUTHN_OIDC_PRESET to turn them on'],
    ['GET', '/server/api/authn/shibboleth', 'Shibboleth sign-on routes are switched off on this server: set AUTHN_SHIBBOLETH=true to turn them on'],
    ['GET', '/server/saml2/service-provider-metadata/uni', 'SAML sign-on routes are switched off on this server: set AUTHN_SAML_PROVIDERS to turn them on'],
    ['POST', '/server/saml2/assertion-consumer/uni', 'SAML sign-on routes are switched off on this server: set AUTHN_SAML_PROVIDERS to turn them on'],
  ] as const
  for (const [method, url, message] of calls) {
    const response = await off.app.inject({ method, url })
    assert.equal(response.statusCode, 404, `${method} ${url}`)
    assert.deepEqual(response.json(), { timestamp: '2026-01-01T00:00:00.000Z', status: 404, error: 'Not Found', message, path: url })
  }
  // Switched on, the same routes serve: an anonymous caller's passkey list is a 401, not the 404.
  assert.equal((await on.app.inject('/api/authn/passkeys')).statusCode, 401)
})

test('the merchant API example runs through the typed client against a server on 127.0.0.1', async (t) => {
  const { app } = await buildTestApp(t, { services: ['payments'] })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const tour = await merchantApiTour(address, 'https://shop.example/webhooks')
  assert.match(tour.merchantId, /^[0-9a-f]{24}$/)
  assert.match(String(tour.webhook.secret), /^whsec_/)
  assert.deepEqual(tour.webhook.events, ['transaction.captured', 'transaction.refunded'])
  assert.equal(tour.events, 0)
  // A refusal comes back as the service's own error body.
  await assert.rejects(merchantApiTour(address, 'http://shop.example/webhooks'), /POST \/merchants\/\{merchantId\}\/webhooks: HTTP 400 .*https/)
})
