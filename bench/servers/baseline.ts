// The yardstick every benchmark compares against: a bare Fastify hello-world, no logging,
// no hooks, in its own process like the server under test.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${address}\n`)
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
