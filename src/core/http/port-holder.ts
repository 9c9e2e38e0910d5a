import type { FastifyBaseLogger, FastifyInstance, FastifyListenOptions } from 'fastify'
import type { AddressInfo } from 'node:net'
import { coreError } from '../errors/codes.ts'
import { fallsUnder } from '../errors/error-owners.ts'
import type { ErrorBodyFormatter } from '../errors/normalize.ts'
import { buildServer, coreErrorBody, type ServerOptions } from './build-server.ts'
import { type FailedCheck, notReady } from './health.ts'

/** The services' paths and bodies, so that a path is answered by its owner before its routes exist. */
export interface PathOwner {
  prefixes: readonly string[]
  errorBody: ErrorBodyFormatter
}

/** What the instance is doing before it serves; `/readyz` names it. */
type StartingState = FailedCheck & { check: 'migrations' | 'database' | 'services' }

/**
 * The port, held from the first moment of a start until the app takes the same listening socket
 * over: the port never refuses a connection in between.
 */
export interface PortHolder {
  readonly log: FastifyBaseLogger
  /** What `/readyz` and the 503s say the instance is waiting for. */
  setState(state: StartingState): void
  /**
   * The app listens on the held socket (no close, no new bind: a connection waiting in the
   * backlog is accepted by whichever server owns the socket at that moment). Answers the address.
   */
  handOver(app: FastifyInstance): Promise<string>
  /** The start failed: stop listening. */
  close(): Promise<void>
}

/** The body of the owner of `path`: the service whose prefix it falls under, else `fallback`. */
function ownerOf(owners: readonly PathOwner[], fallback: ErrorBodyFormatter): (path: string) => ErrorBodyFormatter {
  return (path) => {
    for (const owner of owners) if (owner.prefixes.some((prefix) => fallsUnder(path, prefix))) return owner.errorBody
    return fallback
  }
}

/**
 * Listens on `port` at once and answers while the instance starts (waiting for its database,
 * running migrations, loading its services): `/healthz` 200, `/readyz` 503 naming the state,
 * every other request 503 with `Retry-After` in the body of the service that owns the path. No
 * request is processed, so a proxy may send any of them, POSTs included, to another instance.
 */
export async function holdPort(options: { port: number; host: string; server: ServerOptions; owners: readonly PathOwner[] }): Promise<PortHolder> {
  let state: StartingState = { check: 'migrations', state: 'running' }
  const bodyFor = ownerOf(options.owners, options.server.unclaimedErrorBody ?? coreErrorBody)
  const holder = await buildServer({ ...options.server, unclaimedErrorBody: (error, request) => bodyFor(request.url.split('?')[0] ?? '/')(error, request) })
  holder.addHook('onSend', function closeHeldConnection(_request, reply, payload, done) {
    // A client kept alive on the holder would never reach the app: each answer ends its connection.
    reply.header('connection', 'close')
    done(null, payload)
  })
  holder.get('/healthz', { schema: { hide: true } }, (_request, reply) => {
    reply.send({ status: 'ok' })
  })
  holder.get('/readyz', { schema: { hide: true } }, async () => {
    throw notReady([state])
  })
  holder.all('/*', { schema: { hide: true } }, async () => {
    const waiting = { database: 'waiting for its database', migrations: 'running database migrations', services: 'starting its services' }[state.check]
    throw coreError('service_unavailable', `The service is starting (${waiting}); retry shortly`, { headers: { 'retry-after': '2' } })
  })
  await holder.listen({ port: options.port, host: options.host })
  const server = holder.server as typeof holder.server & { _handle: unknown }

  return {
    log: holder.log,
    setState(next) {
      state = next
    },
    async handOver(app) {
      const { address, port } = server.address() as AddressInfo
      const handle = server._handle
      // A literal address: Fastify binds `localhost` twice (IPv4 and IPv6), which a handle cannot.
      // Node's server.listen takes `handle` in its options object, and Fastify passes it on.
      const listening = await app.listen({ handle, host: address, port } as FastifyListenOptions)
      // The holder forgets the socket (closing it would close the port). The connections it
      // accepted are answered, each with `Connection: close`; a client that connected but has
      // not written yet is not cut off: the holder closes once they have all ended.
      server._handle = null
      const retire = setInterval(() => {
        server.getConnections((_error, count) => {
          if (count > 0) return
          clearInterval(retire)
          void holder.close()
        })
      }, 100)
      return listening
    },
    async close() {
      server.closeAllConnections()
      await holder.close()
    },
  }
}
