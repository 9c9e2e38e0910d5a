import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'

/**
 * Listens, and on SIGTERM or SIGINT stops accepting connections, lets in-flight requests
 * finish and closes everything registered with onClose (the database). After `timeoutMs`
 * (or a second signal) the process exits regardless.
 */
export async function listenUntilSignalled(app: FastifyInstance, options: { port: number; host: string; timeoutMs: number }): Promise<string> {
  closeWithGrace({ delay: options.timeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'fatal error, shutting down')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    await app.close()
  })
  return app.listen({ port: options.port, host: options.host })
}
