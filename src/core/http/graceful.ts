import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'

/**
 * Listens, and on SIGTERM or SIGINT stops accepting connections, lets in-flight requests
 * finish and closes everything registered with onClose (the database). After `timeoutMs`
 * (or a second signal) the process exits regardless. Must be called before the app is ready.
 */
export async function listenUntilSignalled(app: FastifyInstance, options: { port: number; host: string; timeoutMs: number }): Promise<string> {
  let shuttingDown = false
  // A keep-alive connection that finishes its request during shutdown would otherwise stay
  // open (and the server with it) until the client drops it; tell the client to close it.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shuttingDown) reply.header('connection', 'close')
    done(null, payload)
  })
  closeWithGrace({ delay: options.timeoutMs }, async ({ signal, err }) => {
    shuttingDown = true
    if (err) app.log.error({ err }, 'fatal error, shutting down')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    await app.close()
  })
  return app.listen({ port: options.port, host: options.host })
}
