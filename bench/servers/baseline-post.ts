// The ceiling of the POST benchmarks: bare Fastify parsing and validating a JSON object body
// and answering a hello, no work, in its own process. Kept apart from baseline.ts: a second
// route there made its GET a quarter slower, which would have moved every yardstick.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.post('/', { schema: { body: { type: 'object' } } }, async () => ({ hello: 'world' }))
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${address}\n`)
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
