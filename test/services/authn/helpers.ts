import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { ADMINISTRATOR_GROUP } from '../../../src/services/authn/modules/epersons/index.ts'
import { createAuthnServices } from '../../../src/services/authn/services.ts'
import { type DspaceSession, dspaceSession, type TriadClient } from '../../../clients/typescript/index.ts'
import { typedClient } from '../../helpers/typed-client.ts'
import { buildTestApp, type Cleanup, serviceBaseOf, type TestApp, type TestAppOptions } from '../../helpers/build-app.ts'

export const PASSWORD = 'correct horse battery'
export const ADMIN_EMAIL = 'admin@example.org'

/** An authn-only app; argon2 as configured, the manual clock, a fresh database. */
export async function startAuthn(t: Cleanup, env: Record<string, string> = {}, options: Omit<TestAppOptions, 'env' | 'services'> = {}): Promise<TestApp> {
  return buildTestApp(t, { ...options, services: ['authn'], env: { AUTHN_ADMIN_EMAIL: ADMIN_EMAIL, AUTHN_ADMIN_PASSWORD: PASSWORD, ...env } })
}

/** The authn services over the test app's database (to seed epersons and groups). */
export async function authnServices(test: TestApp) {
  return createAuthnServices({
    ...serviceBaseOf(test),
    config: test.config.authn,
  })
}

export async function addEperson(test: TestApp, email: string, options: { admin?: boolean; password?: string; canLogIn?: boolean } = {}) {
  const { epersons } = await authnServices(test)
  const row = await epersons.create({ email, password: options.password ?? PASSWORD, admin: options.admin, canLogIn: options.canLogIn })
  if (options.admin) await epersons.ensureGroup(ADMINISTRATOR_GROUP, true)
  return row
}

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header = '', payload = ''] = token.split('.')
  return { header: JSON.parse(Buffer.from(header, 'base64url').toString()), payload: JSON.parse(Buffer.from(payload, 'base64url').toString()) }
}

function setCookies(response: LightMyRequestResponse): string[] {
  const raw = response.headers['set-cookie']
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
}

/**
 * A client that behaves like dspace-angular in a browser: a cookie jar (HttpOnly cookies
 * included, as the browser keeps them), the CSRF token read from every response's
 * DSPACE-XSRF-TOKEN header and sent back as X-XSRF-TOKEN on every non-GET request, and the
 * token read from the Authorization response header and sent on later requests.
 */
export class BrowserClient {
  app: FastifyInstance
  base: string
  cookies = new Map<string, string>()
  xsrf: string | undefined
  token: string | undefined

  constructor(app: FastifyInstance, base = '/server/api') {
    this.app = app
    this.base = base
  }

  async request(
    method: InjectOptions['method'],
    path: string,
    options: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string>; auth?: boolean } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers }
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
    if (method !== 'GET' && method !== 'HEAD' && this.xsrf) headers['x-xsrf-token'] = this.xsrf
    if (options.auth !== false && this.token) headers.authorization = `Bearer ${this.token}`
    let payload: string | undefined
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      payload = new URLSearchParams(options.form).toString()
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json'
      payload = JSON.stringify(options.json)
    }
    const response = await this.app.inject({ method, url: path.startsWith('/') ? path : `${this.base}/${path}`, headers, payload })
    for (const cookie of setCookies(response)) {
      const [pair = ''] = cookie.split(';')
      const equals = pair.indexOf('=')
      const name = pair.slice(0, equals)
      const value = pair.slice(equals + 1)
      if (value === '' || /max-age=0/i.test(cookie)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const xsrf = response.headers['dspace-xsrf-token']
    if (typeof xsrf === 'string') this.xsrf = xsrf
    const authorization = response.headers.authorization
    if (typeof authorization === 'string' && authorization.startsWith('Bearer ')) this.token = authorization.slice('Bearer '.length)
    return response
  }

  async login(email: string, password = PASSWORD) {
    if (!this.xsrf) await this.request('GET', 'security/csrf')
    return this.request('POST', 'authn/login', { form: { user: email, password }, auth: false })
  }
}

/** Logs in a fresh browser-like client and returns it (token set). */
export async function loggedIn(app: FastifyInstance, email: string, password = PASSWORD, base = '/server/api'): Promise<BrowserClient> {
  const client = new BrowserClient(app, base)
  const response = await client.login(email, password)
  if (response.statusCode !== 200) throw new Error(`login of ${email} failed: ${response.statusCode} ${response.body}`)
  return client
}

/**
 * Logs in through the typed client (clients/typescript) as a script outside a browser does: its
 * DSpace session middleware keeps the CSRF pair and the login token (`session.token`).
 */
export async function typedLoggedIn(app: FastifyInstance, email: string, password = PASSWORD): Promise<TriadClient & { session: DspaceSession }> {
  const session = dspaceSession()
  const client = Object.assign(typedClient(app), { session })
  client.use(session)
  await client.GET('/api/security/csrf')
  const { response } = await client.POST('/api/authn/login', { body: { user: email, password }, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  if (response.status !== 200) throw new Error(`login of ${email} failed: ${response.status} ${await response.text()}`)
  return client
}

/** GET /authn/status as the given bearer token (or none), parsed. */
export async function statusOf(app: FastifyInstance, token?: string, extra: Record<string, string> = {}) {
  const response = await app.inject({
    method: 'GET',
    url: '/api/authn/status',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra },
  })
  return { response, body: response.json() as { authenticated: boolean; authenticationMethod: string | null; _embedded?: Record<string, unknown> } }
}
