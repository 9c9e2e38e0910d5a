import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import type { IncomingMessage, Server } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Lifecycle } from './lifecycle.ts'
import type { PortHolder } from './port-holder.ts'

/** A connection that arrives this long after the previous one ends the drain of the backlog. */
const QUIET_MS = 150
/** Connections still arriving this long after the stop signal come from a proxy that has not noticed. */
const REFUSE_AFTER_MS = 1000
/** After the deadline, streams get this long to send their last event before sockets are cut. */
const LAST_WORDS_MS = 1000
/** A connection that has sent no request for this long is a preconnect, not a request on its way. */
const SILENT_MAX_MS = 2000

/**
 * Listens, and on SIGTERM, SIGINT or SIGHUP stops the way a rolling deploy needs, with nothing
 * a client already sent lost:
 * 1. readiness fails at once (`/readyz` 503) and every response asks its client to close the
 *    connection, so load balancers and keep-alive clients move on;
 * 2. the server keeps accepting until no connection has arrived for QUIET_MS: closing the
 *    listening socket earlier would reset the connections still waiting in its backlog. If new
 *    connections still arrive after REFUSE_AFTER_MS (a proxy that has not noticed), new requests
 *    are answered 503 unprocessed (`lifecycle.refusing`) until they stop, which a proxy that
 *    resends such 503s turns into its cue to stop choosing this instance (bounded by half the
 *    grace period);
 * 3. it stops listening and waits for every request to finish, streamed replies included,
 *    closing connections as they fall idle;
 * 4. at `timeoutMs` what still runs is told to stop (`lifecycle.deadline`: a stream sends an
 *    event asking the client to retry), and a second later the remaining sockets are cut;
 * 5. resources registered with onClose (the database) close, and the process exits 0.
 * A second signal, or `timeoutMs` plus a margin, exits regardless. Call before the app is ready.
 */
export async function listenUntilSignalled(
  app: FastifyInstance,
  lifecycle: Lifecycle,
  options: ({ port: number; host: string } | { holder: PortHolder }) & { timeoutMs: number },
): Promise<string> {
  const silent = trackSilentConnections(app.server)
  let signal: NodeJS.Signals | undefined
  const grace = closeWithGrace({ delay: options.timeoutMs + 2 * LAST_WORDS_MS, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    lifecycle.startDraining()
    if (err) {
      app.log.error({ err }, 'fatal error, shutting down')
      lifecycle.endGrace()
      await app.close()
      return
    }
    app.log.info({ signal, graceMs: options.timeoutMs }, 'shutting down: answering what was sent, finishing running replies')
    const server = app.server
    const deadline = setTimeout(() => {
      // What still runs, for the operator: requests on HTTP connections (upgraded sockets, such
      // as the avatar's WebSockets, are counted by their own routes and not here).
      server.getConnections((_error, connections) => app.log.warn({ connections }, 'grace period over: stopping what still runs'))
      lifecycle.endGrace()
      setTimeout(() => server.closeAllConnections(), LAST_WORDS_MS).unref()
    }, options.timeoutMs)
    if (!(await acceptUntilQuiet(server, silent, REFUSE_AFTER_MS))) {
      // Still sent new connections: a proxy in front (open-source nginx has no active health
      // checks) keeps choosing this instance, and closing now would reset what it sends next.
      // New requests are answered 503 unprocessed: the proxy sends them elsewhere and stops
      // choosing this instance, and the quiet comes.
      app.log.info(`new requests still arriving after ${REFUSE_AFTER_MS} ms: answering them 503 unprocessed until they stop`)
      lifecycle.startRefusing()
      await acceptUntilQuiet(server, silent, options.timeoutMs / 2 - REFUSE_AFTER_MS)
    }
    const sweep = setInterval(() => server.closeIdleConnections(), 100)
    try {
      await app.close()
    } finally {
      clearInterval(sweep)
      clearTimeout(deadline)
    }
  })
  watchStopSignals({
    stop: (received) => {
      signal = received
      void grace.close()
    },
    insist: (received) => {
      app.log.error({ signal: received }, `second ${received}, exiting`)
      process.exit(1)
    },
  })
  return 'holder' in options ? options.holder.handOver(app) : app.listen({ port: options.port, host: options.host })
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const
/** The same signal again within this long is an echo, not a second request. */
const ECHO_MS = 1000

/**
 * The first stop signal stops gracefully; a second one exits at once. A Ctrl-C under
 * `npm start` reaches the server twice, from the terminal (the whole foreground group) and
 * forwarded by npm a moment later: that echo is not a second signal, or every Ctrl-C would
 * skip the graceful stop.
 */
function watchStopSignals(handlers: { stop(signal: NodeJS.Signals): void; insist(signal: NodeJS.Signals): void }): void {
  let first: { signal: NodeJS.Signals; at: number } | undefined
  for (const name of STOP_SIGNALS) {
    process.on(name, (received: NodeJS.Signals) => {
      if (!first) {
        first = { signal: received, at: performance.now() }
        handlers.stop(received)
      } else if (received !== first.signal || performance.now() - first.at > ECHO_MS) {
        handlers.insist(received)
      }
    })
  }
}

/**
 * The connections that have not sent a request yet. Closing the server closes idle connections,
 * and to Node a connection whose request has not been read yet is idle: on a busy CPU a client
 * can connect, then write its request a moment later, and be reset.
 */
function trackSilentConnections(server: Server): { newest(): number | undefined } {
  const silent = new Map<Socket, number>()
  server.on('connection', (socket: Socket) => {
    silent.set(socket, performance.now())
    socket.once('close', () => silent.delete(socket))
  })
  server.on('request', (request: IncomingMessage) => {
    if (silent.size > 0) silent.delete(request.socket)
  })
  return {
    /** When the most recent connection still without a request arrived. */
    newest: () => {
      let newest: number | undefined
      for (const at of silent.values()) if (newest === undefined || at > newest) newest = at
      return newest
    },
  }
}

/**
 * Resolves true once no connection has arrived for QUIET_MS and every connection has sent its
 * request (or stayed silent for SILENT_MAX_MS); false if that has not happened within `maxMs`.
 */
async function acceptUntilQuiet(server: Server, silent: { newest(): number | undefined }, maxMs: number): Promise<boolean> {
  const started = performance.now()
  let last = started
  const quiet = () => performance.now() - last >= QUIET_MS && performance.now() - (silent.newest() ?? 0) >= SILENT_MAX_MS
  const onConnection = () => {
    last = performance.now()
  }
  server.on('connection', onConnection)
  try {
    do {
      await sleep(QUIET_MS / 3)
      // A timer runs before the loop's poll phase: on a starved CPU the quiet period can pass
      // while connections wait in the backlog, unaccepted; closing then would reset them. The
      // check runs after the poll phase (setImmediate), once those have been accepted.
      await new Promise((resolve) => setImmediate(resolve))
    } while (!quiet() && performance.now() - started < maxMs)
    return quiet()
  } finally {
    server.off('connection', onConnection)
  }
}
