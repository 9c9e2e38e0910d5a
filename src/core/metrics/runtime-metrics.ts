import type { Redis } from 'ioredis'
import { Gauge } from 'prom-client'
import { boundHistogram } from './bound-series.ts'
import type { Database } from '../db/create-db.ts'
import { redisReady } from '../redis.ts'
import { within } from '../timeout.ts'
import { LATENCY_BUCKETS, type PrometheusMetrics } from './registry.ts'

/** A Redis that has not answered PING within this long counts as down for the scrape. */
const REDIS_PING_TIMEOUT_MS = 1000

const OPERATIONS = new Set(['select', 'insert', 'update', 'delete', 'begin', 'commit', 'rollback', 'with'])

/** The statement's first keyword when it is a common one, else `other`: a bounded label. */
function operationOf(sql: string): string {
  const match = /^\s*(\w+)/.exec(sql)
  const word = match?.[1]?.toLowerCase() ?? 'other'
  return OPERATIONS.has(word) ? word : 'other'
}

/**
 * The database's query latency (every statement, Kysely's or run directly on SQLite), its pool
 * (PostgreSQL), where its routed reads ran (with a standby), and Redis' round trip, measured by a PING when Prometheus scrapes.
 */
export function installRuntimeMetrics(metrics: PrometheusMetrics, deps: { database: Database; redis?: Redis }): void {
  const { database, redis } = deps
  const queries = boundHistogram(metrics.registry, {
    name: 'triad_db_query_duration_seconds',
    help: 'Time a database statement took, by dialect, first keyword and outcome',
    labelNames: ['dialect', 'operation', 'outcome'],
    buckets: [0.00005, 0.0001, ...LATENCY_BUCKETS],
  })
  const children = new Map<string, { observe(value: number): void }>()
  database.observeQueries((query) => {
    const operation = operationOf(query.sql)
    const outcome = query.failed ? 'error' : 'ok'
    const key = `${operation} ${outcome}`
    let child = children.get(key)
    if (!child) {
      child = queries({ dialect: database.dialect, operation, outcome })
      children.set(key, child)
    }
    child.observe(query.durationMs / 1000)
  })
  if (database.observeRoutedReads) {
    const routedReads = metrics.counter<'target' | 'reason'>({
      name: 'triad_db_routed_reads_total',
      help: 'Lag-tolerant reads with a standby (DATABASE_READ_URL), by where they ran (standby, primary) and why',
      labelNames: ['target', 'reason'],
    })
    database.observeRoutedReads((outcome) => routedReads.inc(outcome))
  }
  const poolStats = database.poolStats
  if (poolStats) {
    const pool = new Gauge({
      name: 'triad_db_pool_connections',
      help: 'PostgreSQL pool connections of this instance: in_use, idle, and requests waiting for one',
      labelNames: ['state'],
      registers: [metrics.registry],
      collect() {
        const stats = poolStats()
        this.set({ state: 'in_use' }, stats.total - stats.idle)
        this.set({ state: 'idle' }, stats.idle)
        this.set({ state: 'waiting' }, stats.waiting)
      },
    })
    void pool
  }
  if (redis) {
    // One PING per scrape, shared by both gauges: each awaits it in its own collect, so both
    // report this scrape's answer (the up gauge used to be read before the PING settled, and so
    // reported the previous scrape's). Not connected counts as down at once.
    let scrape: Promise<number | undefined> | undefined
    const measure = () => {
      scrape ??= (async () => {
        const started = performance.now()
        try {
          if (!redisReady(redis)) return undefined
          await within(redis.ping(), REDIS_PING_TIMEOUT_MS, 'Redis')
          return (performance.now() - started) / 1000
        } catch {
          return undefined
        } finally {
          // The next scrape measures again (both gauges of this one have started awaiting it).
          setImmediate(() => (scrape = undefined))
        }
      })()
      return scrape
    }
    new Gauge({
      name: 'triad_redis_up',
      help: '1 when Redis answered PING within 1 s at this scrape, else 0',
      registers: [metrics.registry],
      async collect() {
        this.set((await measure()) === undefined ? 0 : 1)
      },
    })
    new Gauge({
      name: 'triad_redis_round_trip_seconds',
      help: 'Time Redis took to answer PING at this scrape (absent while it does not answer)',
      registers: [metrics.registry],
      async collect() {
        const seconds = await measure()
        if (seconds === undefined) this.reset()
        else this.set(seconds)
      },
    })
  }
}
