// Foundation benchmark: Triad's GET /healthz (request id, one log line per request at the
// production level, error handling, all three services mounted) against a bare Fastify
// hello-world, same run. Usage: npm run bench [-- --rounds 5 --duration 5]
import { parseArgs } from 'node:util'
import { measureWithCpu, printComparison, startBaseline, startTriad } from './lib.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '5' } } })
const rounds = Number(values.rounds)
const durationSeconds = Number(values.duration)

const baseline = await startBaseline()
const triad = await startTriad(process.env.BENCH_TRIAD_ENV ? Object.fromEntries(process.env.BENCH_TRIAD_ENV.split(' ').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) : {})
try {
  const results: Array<{ b: Awaited<ReturnType<typeof measureWithCpu>>; t: Awaited<ReturnType<typeof measureWithCpu>> }> = []
  for (let round = 0; round < rounds; round++) {
    const b = await measureWithCpu(baseline, { path: '/', durationSeconds })
    const t = await measureWithCpu(triad, { path: '/healthz', durationSeconds })
    results.push({ b, t })
    console.log(`  round ${round + 1}: ${b.requestsPerSecond.toFixed(0)} vs ${t.requestsPerSecond.toFixed(0)} req/s (${(t.requestsPerSecond / b.requestsPerSecond).toFixed(2)}), CPU ${b.cpuPerRequestUs.toFixed(1)} vs ${t.cpuPerRequestUs.toFixed(1)} µs/request`)
  }
  const mean = (pick: (r: (typeof results)[number]) => number) => results.reduce((sum, r) => sum + pick(r), 0) / results.length
  const least = (pick: (r: (typeof results)[number]) => number) => Math.min(...results.map(pick))
  const ratios = results.map((r) => r.t.requestsPerSecond / r.b.requestsPerSecond).sort((x, y) => x - y)
  printComparison(
    `GET /healthz vs bare Fastify (${rounds} rounds × ${durationSeconds} s, 20 connections)`,
    {
      baseline: { ...results[0].b, requestsPerSecond: mean((r) => r.b.requestsPerSecond), latencyP50Ms: mean((r) => r.b.latencyP50Ms), latencyP99Ms: mean((r) => r.b.latencyP99Ms) },
      subject: { ...results[0].t, requestsPerSecond: mean((r) => r.t.requestsPerSecond), latencyP50Ms: mean((r) => r.t.latencyP50Ms), latencyP99Ms: mean((r) => r.t.latencyP99Ms) },
      ratio: mean((r) => r.t.requestsPerSecond) / mean((r) => r.b.requestsPerSecond),
    },
    0.8,
  )
  console.log(`  median ratio of the rounds ${ratios[Math.floor(ratios.length / 2)].toFixed(2)}`)
  const cpuRatio = least((r) => r.b.cpuPerRequestUs) / least((r) => r.t.cpuPerRequestUs)
  console.log(`  server CPU per request (least of the rounds): baseline ${least((r) => r.b.cpuPerRequestUs).toFixed(1)} µs, triad ${least((r) => r.t.cpuPerRequestUs).toFixed(1)} µs → ratio ${cpuRatio.toFixed(2)}`)
} finally {
  await Promise.all([baseline.stop(), triad.stop()])
}
