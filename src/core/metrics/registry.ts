import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * The metrics a service may declare, without knowing prom-client: each service builds its own
 * recorder (`services/<service>/metrics.ts`) over this, and its domain code calls that
 * recorder. When metrics are off every handle is a no-op, so recording costs a call.
 */
export interface MetricsRegistry {
  readonly enabled: boolean
  counter<L extends string = never>(spec: MetricSpec<L>): CounterHandle<L>
  /** `read`: a gauge without labels whose value is read when Prometheus scrapes. */
  gauge<L extends string = never>(spec: MetricSpec<L> & { read?: () => number }): GaugeHandle<L>
  histogram<L extends string = never>(spec: MetricSpec<L> & { buckets?: number[] }): HistogramHandle<L>
}

interface MetricSpec<L extends string> {
  /** snake_case, prefixed by the owner (`triad_authn_…`), ending in the unit (`_seconds`, `_total`). */
  name: string
  help: string
  /** Every value of every label must come from a bounded set (an outcome, a route pattern): never an id. */
  labelNames?: readonly L[]
}

type Labels<L extends string> = [L] extends [never] ? Record<string, never> : Record<L, string>

interface CounterHandle<L extends string> {
  inc(labels?: Labels<L>, value?: number): void
}

interface GaugeHandle<L extends string> {
  inc(labels?: Labels<L>, value?: number): void
  dec(labels?: Labels<L>, value?: number): void
  set(labels: Labels<L>, value: number): void
}

interface HistogramHandle<L extends string> {
  observe(labels: Labels<L>, value: number): void
}

/** Buckets for latencies in seconds: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const ignore = () => {}
const noHandle = { inc: ignore, dec: ignore, set: ignore, observe: ignore }

/** Metrics off: nothing is registered and recording does nothing. */
export const noMetrics: MetricsRegistry = {
  enabled: false,
  counter: () => noHandle,
  gauge: () => noHandle,
  histogram: () => noHandle,
}

export interface PrometheusMetrics extends MetricsRegistry {
  /** The exposition in Prometheus' text format. */
  render(): Promise<string>
  readonly contentType: string
  /** The prom-client registry, for the core's own metrics. */
  readonly registry: Registry
}

/**
 * A registry of its own per app (tests build many apps in one process), with the process
 * defaults (event loop lag, heap, GC, CPU, file descriptors) under their standard names.
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    enabled: true,
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    counter: <L extends string>(spec: MetricSpec<L>) =>
      new Counter({ name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers: [registry] }) as CounterHandle<L>,
    gauge: <L extends string>(spec: MetricSpec<L> & { read?: () => number }) => {
      const read = spec.read
      return new Gauge({
        name: spec.name,
        help: spec.help,
        labelNames: spec.labelNames ?? [],
        registers: [registry],
        ...(read
          ? {
              collect() {
                this.set(read())
              },
            }
          : {}),
      }) as GaugeHandle<L>
    },
    histogram: <L extends string>(spec: MetricSpec<L> & { buckets?: number[] }) =>
      new Histogram({ name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], buckets: spec.buckets ?? LATENCY_BUCKETS, registers: [registry] }) as HistogramHandle<L>,
  }
}
