import type { FastifyInstance } from 'fastify'
import { createTriadClient, type TriadClient } from '../../clients/typescript/index.ts'

/**
 * A `fetch` that hands each request to `app.inject` instead of a socket: the typed client's tests
 * run in-process, on the app's manual clock, with no port to take (docs/typed-client.md says so).
 * The client builds real `Request`s and reads real `Response`s either way; the test of the
 * example runs it over a real socket on 127.0.0.1.
 */
function injectFetch(app: FastifyInstance): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url)
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
    const answer = await app.inject({ method: request.method as 'GET', url: url.pathname + url.search, headers: Object.fromEntries(request.headers), payload: body })
    const headers = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) headers.append(name, String(item))
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD'
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), { status: answer.statusCode, headers })
  }
}

/** The typed client (clients/typescript) over `app.inject`; `headers` go with every request. */
export function typedClient(app: FastifyInstance, headers: Record<string, string> = {}): TriadClient {
  return createTriadClient({ baseUrl: 'http://triad.test', fetch: injectFetch(app), headers })
}
