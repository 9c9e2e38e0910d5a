import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import type { Server } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Lifecycle } from './lifecycle.ts'

/** A connection that arrives this long after the previous one ends the drain of the backlog. */
const QUIET_MS = 150
/** After the deadline, streams get this long to send their last event before sockets are cut. */
const LAST_WORDS_MS = 1000

/**
 * Listens, and on SIGTERM, SIGINT or SIGHUP stops the way a rolling deploy needs, with nothing
 * a client already sent lost:
 * 1. readiness fails at once (`/readyz` 503) and every response asks its client to close the
 *    connection, so load balancers and keep-alive clients move on;
 * 2. the server keeps accepting until no connection has arrived for QUIET_MS (bounded by half
 *    the grace period): closing the listening socket earlier would reset the connections still
 *    waiting in its backlog;
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
  options: { port: number; host: string; timeoutMs: number },
): Promise<string> {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (lifecycle.draining) reply.header('connection', 'close')
    done(null, payload)
  })
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
      app.log.warn('grace period over: stopping what still runs')
      lifecycle.endGrace()
      setTimeout(() => server.closeAllConnections(), LAST_WORDS_MS).unref()
    }, options.timeoutMs)
    await acceptUntilQuiet(server, options.timeoutMs / 2)
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
  return app.listen({ port: options.port, host: options.host })
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

/** Resolves once no connection has arrived for QUIET_MS, or after `maxMs`. */
async function acceptUntilQuiet(server: Server, maxMs: number): Promise<void> {
  const started = performance.now()
  let last = started
  const onConnection = () => {
    last = performance.now()
  }
  server.on('connection', onConnection)
  try {
    while (performance.now() - last < QUIET_MS && performance.now() - started < maxMs) await sleep(QUIET_MS / 3)
  } finally {
    server.off('connection', onConnection)
  }
}
