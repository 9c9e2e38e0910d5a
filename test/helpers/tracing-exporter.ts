// Tracing as bin/triad.js starts it: the loader hook first, then the SDK, then everything it
// instruments. A test imports this module dynamically before anything instrumented (statically
// only node:assert, node:module, node:test and types), and reads the spans from `exporter`.
import { register } from 'node:module'

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
const { startTracing } = await import('../../src/core/telemetry/tracing.ts')
const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base')

export const exporter = new InMemorySpanExporter()
export const tracing = startTracing({ exporter })
