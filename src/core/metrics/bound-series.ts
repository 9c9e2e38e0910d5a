// Counters and histograms for what is recorded on every request or statement. prom-client's own
// check, sort and hash their label set on every call, also through a child from `labels()`:
// about 6 % of a /healthz request's CPU with the two HTTP series (bench/metrics-overhead.ts
// --profile). Here a label set is resolved once, into a series that recording only adds to;
// the registry renders them like any prom-client metric (it calls `get()`).
import type { Registry } from 'prom-client'

interface Spec<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
}

interface ValueLine {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

/** One labelled series of a counter. */
export interface BoundCounter {
  inc(value?: number): void
}

/** One labelled series of a histogram. */
export interface BoundHistogram {
  observe(value: number): void
}

/** A family of series whose label sets are resolved once (`series(labels)`), rendered by the registry. */
function registerFamily<L extends string, S>(
  registry: Registry,
  spec: Spec<L>,
  type: 'counter' | 'histogram',
  create: () => S,
  lines: (labels: Record<L, string>, series: S) => ValueLine[],
): (labels: Record<L, string>) => S {
  const families = new Map<string, { labels: Record<L, string>; series: S }>()
  registry.registerMetric({
    name: spec.name,
    get: async () => ({
      name: spec.name,
      help: spec.help,
      type,
      aggregator: 'sum',
      values: [...families.values()].flatMap(({ labels, series }) => lines(labels, series)),
    }),
  } as unknown as Parameters<Registry['registerMetric']>[0])
  return (labels) => {
    const key = spec.labelNames.map((name) => labels[name]).join('\u0000')
    let family = families.get(key)
    if (!family) {
      family = { labels: { ...labels }, series: create() }
      families.set(key, family)
    }
    return family.series
  }
}

export function boundCounter<L extends string>(registry: Registry, spec: Spec<L>): (labels: Record<L, string>) => BoundCounter {
  return registerFamily(
    registry,
    spec,
    'counter',
    () => {
      const series = {
        value: 0,
        inc(value = 1) {
          series.value += value
        },
      }
      return series
    },
    (labels, series) => [{ labels, value: series.value }],
  )
}

export function boundHistogram<L extends string>(registry: Registry, spec: Spec<L> & { buckets: readonly number[] }): (labels: Record<L, string>) => BoundHistogram {
  const bounds = [...spec.buckets].sort((a, b) => a - b)
  return registerFamily(
    registry,
    spec,
    'histogram',
    () => {
      // counts[i]: observations in (bounds[i-1], bounds[i]]; the last one above every bound.
      const counts = new Float64Array(bounds.length + 1)
      const series = {
        counts,
        sum: 0,
        count: 0,
        observe(value: number) {
          let index = 0
          while (index < bounds.length && value > bounds[index]) index++
          counts[index]++
          series.sum += value
          series.count++
        },
      }
      return series
    },
    (labels, series) => {
      let cumulative = 0
      const lines: ValueLine[] = bounds.map((bound, index) => {
        cumulative += series.counts[index]
        return { labels: { ...labels, le: bound }, value: cumulative, metricName: `${spec.name}_bucket` }
      })
      lines.push({ labels: { ...labels, le: '+Inf' }, value: series.count, metricName: `${spec.name}_bucket` })
      lines.push({ labels, value: series.sum, metricName: `${spec.name}_sum` })
      lines.push({ labels, value: series.count, metricName: `${spec.name}_count` })
      return lines
    },
  )
}
