// Foundation benchmark: Triad's GET /healthz against a bare Fastify hello-world, same run.
// Usage: npm run bench [-- --rounds 3 --duration 5]
import { parseArgs } from 'node:util'
import { compare, measure, printComparison, startBaseline, startTriad } from './lib.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } })
const rounds = Number(values.rounds)
const durationSeconds = Number(values.duration)

const baseline = await startBaseline()
const triad = await startTriad()
try {
  const result = await compare(
    rounds,
    () => measure(baseline.url, { path: '/', durationSeconds }),
    () => measure(triad.url, { path: '/healthz', durationSeconds }),
  )
  printComparison(`GET /healthz vs bare Fastify (${rounds} rounds × ${durationSeconds} s, 20 connections)`, result, 0.8)
} finally {
  await Promise.all([baseline.stop(), triad.stop()])
}
