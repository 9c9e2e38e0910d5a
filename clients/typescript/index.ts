// Triad's typed client: openapi-fetch over the types generated from the OpenAPI document
// (openapi.d.ts, `npm run client:generate`). Every path, parameter, body and answer is typed, for
// all three services; docs/typed-client.md shows it in use.
import createClient, { type ClientOptions, type Middleware } from 'openapi-fetch'
import type { paths } from './openapi.d.ts'

export type { components, operations, paths } from './openapi.d.ts'

/** A client for one Triad server: `baseUrl` is its origin (`http://127.0.0.1:8080`); `headers` go with every request. */
export function createTriadClient(options: ClientOptions & { baseUrl: string }) {
  return createClient<paths>(options)
}

export type TriadClient = ReturnType<typeof createTriadClient>

/** The middleware, and the login token the server last handed out (POST /authn/login, a refresh), if any. */
export type DspaceSession = Middleware & { readonly token: string | undefined }

/**
 * The authn API's login state, kept as dspace-angular keeps it in a browser, for a client outside
 * one: the CSRF token of the `DSPACE-XSRF-TOKEN` response header echoed as `X-XSRF-TOKEN` on
 * every request that changes something, the cookies the server sets sent back, and the token of
 * an `Authorization` response header sent as the bearer from then on. `client.use(dspaceSession())`.
 * A script with a personal access token needs none of this: it sends `Authorization: Bearer triad_pat_…`.
 */
export function dspaceSession(): DspaceSession {
  const cookies = new Map<string, string>()
  let xsrf: string | undefined
  let token: string | undefined
  return {
    get token() {
      return token
    },
    onRequest({ request }: { request: Request }) {
      if (cookies.size > 0) request.headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '))
      if (xsrf && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-xsrf-token', xsrf)
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`)
      return request
    },
    onResponse({ response }: { response: Response }) {
      for (const cookie of response.headers.getSetCookie()) {
        const [pair = ''] = cookie.split(';')
        const name = pair.slice(0, pair.indexOf('='))
        const value = pair.slice(pair.indexOf('=') + 1)
        if (value === '' || /max-age=0/i.test(cookie)) cookies.delete(name)
        else cookies.set(name, value)
      }
      xsrf = response.headers.get('dspace-xsrf-token') ?? xsrf
      const authorization = response.headers.get('authorization')
      if (authorization?.startsWith('Bearer ')) token = authorization.slice('Bearer '.length)
      return response
    },
  }
}
