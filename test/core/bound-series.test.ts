import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Registry } from 'prom-client'
import { boundCounter, boundHistogram } from '../../src/core/metrics/bound-series.ts'

test('bound series render as Prometheus counters and cumulative histograms (a value on a bound counts in it)', async () => {
  const registry = new Registry()
  const requests = boundCounter(registry, { name: 'x_requests_total', help: 'requests', labelNames: ['route'] })
  const latency = boundHistogram(registry, { name: 'x_seconds', help: 'latency', labelNames: ['route'], buckets: [0.5, 0.1, 1] })
  const a = requests({ route: '/a' })
  a.inc()
  a.inc(2)
  assert.equal(requests({ route: '/a' }), a, 'one series per label set')
  const slow = latency({ route: '/a' })
  for (const value of [0.05, 0.1, 0.3, 2]) slow.observe(value)
  const text = await registry.metrics()
  assert.match(text, /# TYPE x_requests_total counter\nx_requests_total\{route="\/a"\} 3/)
  assert.match(text, /# TYPE x_seconds histogram/)
  for (const [le, count] of [['0.1', 2], ['0.5', 3], ['1', 3], ['\\+Inf', 4]] as const) {
    assert.match(text, new RegExp(`x_seconds_bucket\\{route="/a",le="${le}"\\} ${count}\\n`))
  }
  assert.match(text, /x_seconds_sum\{route="\/a"\} 2\.45/)
  assert.match(text, /x_seconds_count\{route="\/a"\} 4/)
})
