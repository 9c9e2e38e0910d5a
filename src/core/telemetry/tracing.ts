import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { packageInfo } from '../version.ts'
import { telemetryHooks } from './hooks.ts'

/**
 * Starts the OpenTelemetry SDK: spans for HTTP (server and client), Fastify's routes and hooks,
 * PostgreSQL, Redis and fetch (undici: the language-model and speech providers), plus one span
 * per SQLite statement; the request id on the request's span; trace and span ids on every log
 * line. The exporter, sampler and resource come from the standard OTEL_* variables; `exporter`
 * replaces the exporter (tests: an in-memory one). Must run before fastify, pg and ioredis are
 * imported: `bin/triad.js` calls it first when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set.
 */
export function startTracing(options: { exporter?: SpanExporter } = {}): { shutdown(): Promise<void> } {
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'triad',
    ...(options.exporter ? { spanProcessors: [new SimpleSpanProcessor(options.exporter)] } : {}),
    instrumentations: [
      new HttpInstrumentation(),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        requestHook: (span, request) => {
          span.setAttribute('http.request.id', String(request.id))
        },
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  })
  sdk.start()
  const tracer = trace.getTracer('triad', packageInfo.version)
  telemetryHooks.logIds = (): Record<string, string> => {
    const span = trace.getSpan(context.active())
    if (!span) return {}
    const { traceId, spanId, traceFlags } = span.spanContext()
    return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}` }
  }
  telemetryHooks.observeDatabase = (database) => {
    if (database.dialect !== 'sqlite') return
    database.observeQueries((query) => {
      // Only inside a trace (a request): statements at start-up or in timers stay untraced.
      const parent = context.active()
      if (!trace.getSpan(parent)) return
      const start = performance.timeOrigin + query.startedAt
      const span = tracer.startSpan(
        `sqlite ${query.sql.trimStart().split(/\s/, 1)[0]?.toLowerCase() ?? 'query'}`,
        { kind: SpanKind.CLIENT, startTime: start, attributes: { 'db.system.name': 'sqlite', 'db.query.text': query.sql } },
        parent,
      )
      if (query.failed) span.setStatus({ code: 2 })
      span.end(start + query.durationMs)
    })
  }
  telemetryHooks.flush = async () => {
    // The global provider is a proxy; the SDK's provider behind it can flush.
    const proxy = trace.getTracerProvider() as { getDelegate?(): { forceFlush?(): Promise<void> } }
    await proxy.getDelegate?.().forceFlush?.()
  }
  return { shutdown: () => sdk.shutdown() }
}
