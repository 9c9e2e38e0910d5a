import type { FastifyInstance } from 'fastify'
import { coreError } from '../errors/codes.ts'
import { buildServer, type ServerOptions } from './build-server.ts'
import { notReady } from './health.ts'

/**
 * Holds the port while migrations run (on PostgreSQL another instance may hold the migration
 * lock for a while): `/healthz` answers, `/readyz` fails naming the migrations, and any other
 * request gets a 503 asking to retry, instead of a refused connection that a load balancer or
 * an orchestrator would read as a dead process. Closed just before the app itself listens.
 */
export async function answerWhileMigrating(options: { port: number; host: string; server: ServerOptions }): Promise<{ close(): Promise<void> }> {
  const app: FastifyInstance = await buildServer(options.server)
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('connection', 'close')
    done(null, payload)
  })
  app.get('/healthz', { schema: { hide: true } }, (_request, reply) => {
    reply.send({ status: 'ok' })
  })
  app.get('/readyz', { schema: { hide: true } }, async () => {
    throw notReady([{ check: 'migrations', state: 'running' }])
  })
  app.all('/*', { schema: { hide: true } }, async () => {
    throw coreError('service_unavailable', 'The service is starting (database migrations are running); retry shortly', { headers: { 'retry-after': '5' } })
  })
  await app.listen({ port: options.port, host: options.host })
  return {
    close: async () => {
      app.server.closeAllConnections()
      await app.close()
    },
  }
}
