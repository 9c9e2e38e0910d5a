import { parseArgs } from 'node:util'
import { fuzzRoutes } from './fuzz-routes.ts'

/** `npm run fuzz -- --seed N --runs M`: the route fuzz suite, as long as you like. */
const { values } = parseArgs({ options: { seed: { type: 'string' }, runs: { type: 'string', default: '10000' } } })
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
const runs = Number(values.runs)
console.log(`fuzz: seed ${seed}, ${runs} runs (repeat with --seed ${seed})`)
const cleanups: Array<() => Promise<void> | void> = []
let failed = false
try {
  const { requests, statuses } = await fuzzRoutes({ after: (fn) => cleanups.push(fn) }, { seed, runs })
  console.log(`fuzz: ${requests} requests, statuses ${JSON.stringify(statuses)}`)
} catch (error) {
  failed = true
  console.error(error)
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
}
process.exitCode = failed ? 1 : 0
