import type { FastifyInstance } from 'fastify'
import type { ErrorBodyFormatter } from './normalize.ts'

/**
 * Which error body a path gets when Fastify fails a request before any route's own error
 * handler can see it: an undecodable URL, a path parameter over the routing limit, a path
 * no route matches. The answer is the body of the service whose routes start the same way
 * (`/transactions/<too long>` gets a payments error), or the core's for a path nobody owns.
 *
 * Ownership is learnt from the routes themselves, so a new route needs no registration: each
 * encapsulation context that installs its error handling records its formatter, and every
 * route added in that context (or a child) is filed under its static prefix and the
 * context's mount prefix.
 */
export interface ErrorOwners {
  /** Learns the owners of paths from the routes added to `app` from now on. */
  track(app: FastifyInstance): void
  /** The formatter of the longest route prefix that `path` falls under. */
  formatterFor(path: string): ErrorBodyFormatter | undefined
}

const kFormatter = Symbol('triad.errorFormatter')

type WithFormatter = FastifyInstance & { [kFormatter]?: ErrorBodyFormatter }

/**
 * Records the formatter of a context. Fastify's child contexts inherit their parent's
 * properties through the prototype chain, so the nearest context that set one wins.
 */
export function setContextFormatter(app: FastifyInstance, format: ErrorBodyFormatter): void {
  ;(app as WithFormatter)[kFormatter] = format
}

/** The part of a route URL before its first parameter or wildcard. */
function staticPrefix(url: string): string {
  const cut = url.search(/[:*]/)
  return cut === -1 ? url : url.slice(0, cut)
}

/**
 * True when `path` is `prefix` or lies below it, segment-wise: `/transactions` and
 * `/transactions/x` fall under `/transactions/`, `/transactionsX` does not.
 */
export function fallsUnder(path: string, prefix: string): boolean {
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix
  return path === base || path.startsWith(`${base}/`)
}

export function createErrorOwners(): ErrorOwners {
  const owners = new Map<string, ErrorBodyFormatter>()
  return {
    track(app) {
      app.addHook('onRoute', function (this: WithFormatter, route) {
        const format = this[kFormatter]
        if (!format) return
        // The context's own prefix too (`/api`), so a path under it that no route starts with
        // still belongs to the service mounted there.
        for (const prefix of [staticPrefix(route.url), this.prefix]) {
          if (prefix !== '/' && prefix !== '') owners.set(prefix, format)
        }
      })
    },
    formatterFor(path) {
      let best: string | undefined
      for (const prefix of owners.keys()) {
        if (fallsUnder(path, prefix) && (best === undefined || prefix.length > best.length)) best = prefix
      }
      return best === undefined ? undefined : owners.get(best)
    },
  }
}
