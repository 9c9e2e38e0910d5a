import { it } from 'node:test'
import { fuzzRoutes } from './fuzz-routes.ts'

/**
 * Runs the route fuzz suite on a fixed seed (so CI is repeatable): the sweep of hostile text
 * through every string field, then `runs` random requests (about 10 s in all).
 * `npm run fuzz -- --seed N --runs M` runs it longer or on another seed; FUZZ_SEED and
 * FUZZ_RUNS do the same here.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20261125)
const runs = Number(process.env.FUZZ_RUNS ?? 5000)

it(`malformed requests and hostile text in every field of every route: no 5xx, every error in its service's shape, healthy, nothing lost (seed ${seed}, ${runs} runs)`, async (t) => {
  const { requests, statuses } = await fuzzRoutes(t, { seed, runs })
  t.diagnostic(`fuzz seed ${seed}: ${requests} requests, statuses ${JSON.stringify(statuses)}`)
})
