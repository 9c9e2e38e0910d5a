import type { LightMyRequestResponse } from 'fastify'
import type { Cleanup, TestApp, TestAppOptions } from '../../../helpers/build-app.ts'
import { BrowserClient, startAuthn } from '../helpers.ts'
import { startTestIdp, type TestIdp } from './test-idp.ts'

export const UI = 'https://ui.example.org'
export const BASE_URL = 'https://repo.example.org'
export const ACS = `${BASE_URL}/server/saml2/assertion-consumer/uni`
export const SP_ENTITY_ID = `${BASE_URL}/server/saml2/service-provider-metadata/uni`

/** An authn app with one SAML provider `uni` (the test IdP's metadata file) and the rest of `provider` merged in. */
export async function startSaml(
  t: Cleanup,
  provider: Record<string, unknown> = {},
  env: Record<string, string> = {},
  options: Omit<TestAppOptions, 'env' | 'services'> = {},
): Promise<{ test: TestApp; idp: TestIdp }> {
  const idp = await startTestIdp(t)
  const test = await startAuthn(
    t,
    {
      AUTHN_ALLOWED_ORIGINS: UI,
      AUTHN_SAML_BASE_URL: BASE_URL,
      AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', metadata: idp.metadataPath, autoRegister: true, ...provider }]),
      ...env,
    },
    options,
  )
  return { test, idp }
}

/** Starts a login in `browser`: the redirect to the provider, whose Location carries the AuthnRequest. */
export async function beginLogin(browser: BrowserClient, redirectUrl = `${UI}/home`): Promise<string> {
  const response = await browser.request('GET', `/server/saml2/authenticate/uni?redirectUrl=${encodeURIComponent(redirectUrl)}`)
  if (response.statusCode !== 302) throw new Error(`authenticate answered ${response.statusCode} ${response.body}`)
  return String(response.headers.location)
}

/** Posts a SAMLResponse to the assertion consumer, as the provider's auto-submitting form does. */
export function postResponse(browser: BrowserClient, samlResponse: string, id = 'uni'): Promise<LightMyRequestResponse> {
  return browser.request('POST', `/server/saml2/assertion-consumer/${id}`, {
    form: { SAMLResponse: samlResponse, RelayState: '' },
    headers: { origin: 'https://idp.example.edu' },
  })
}

/** The last step, as dspace-angular does it after the redirect: a CSRF pair, then POST /authn/login. */
export async function finishLogin(browser: BrowserClient): Promise<LightMyRequestResponse> {
  if (!browser.xsrf) await browser.request('GET', 'security/csrf')
  return browser.request('POST', 'authn/login', { auth: false })
}

export function newBrowser(test: TestApp): BrowserClient {
  return new BrowserClient(test.app)
}
