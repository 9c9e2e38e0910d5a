import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Socket } from 'node:net'
import { context, type Span, SpanKind, trace } from '@opentelemetry/api'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { packageInfo } from '../version.ts'
import { telemetryHooks } from './hooks.ts'
import { sqlSpanName, summariseSql } from './sql-summary.ts'

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
        // An exception event carries the stack, and with it the install's file paths; the span's
        // status keeps the message, and the log line of a 500 (with the trace id) has the stack.
        recordExceptions: false,
        requestHook: function nameRequestSpan(span, request) {
          span.setAttribute('http.request.id', String(request.id))
          span.updateName(httpSpanName(request.method, request.routeOptions.url))
          if (request.headers.upgrade !== undefined) endWithTheSocket(span, request.raw.socket)
        },
        lifecycleHook: function nameLifecycleSpan(span, info) {
          const name = lifecycleSpanName(info.hookName, callbackNameOf(span), info.request)
          span.updateName(name)
          // @fastify/otel's own hook.name is the plugin's name, which for an anonymous plugin is its source text.
          span.setAttribute('hook.name', name)
        },
      }),
      new PgInstrumentation({
        requireParentSpan: true,
        requestHook: function describeStatement(span, info) {
          const summary = summariseSql(info.query.text)
          span.updateName(sqlSpanName(summary))
          span.setAttributes(databaseAttributes('postgresql', summary))
        },
        connectionHook: function describeConnection(span) {
          span.setAttribute('db.system', 'postgresql')
        },
      }),
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
      const summary = summariseSql(query.sql)
      const span = tracer.startSpan(
        sqlSpanName(summary),
        { kind: SpanKind.CLIENT, startTime: start, attributes: { ...databaseAttributes('sqlite', summary), 'db.query.text': query.sql } },
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

/**
 * A WebSocket's request never reaches the hook that ends its span (@fastify/websocket takes the
 * reply over), so the span ends with the socket, as the HTTP server span does. A refused upgrade
 * (400, 426) is an ordinary answer whose span has ended by then.
 */
function endWithTheSocket(span: Span, socket: Socket): void {
  socket.once('close', function endSocketSpan() {
    if ((span as Partial<ReadableSpan>).ended === true) return
    span.setAttribute('http.response.status_code', 101)
    span.end()
  })
}

/** A server span's name by OpenTelemetry's HTTP conventions: `{method} {route}`, the method alone when no route matched. */
function httpSpanName(method: string, route: string | undefined): string {
  return route ? `${method} ${route}` : method
}

/** `db.system` (the name older backends read) and `db.system.name`, `db.operation.name`, `db.collection.name`. */
function databaseAttributes(system: string, summary: ReturnType<typeof summariseSql>): Record<string, string> {
  return {
    'db.system': system,
    'db.system.name': system,
    'db.operation.name': summary.operation,
    ...(summary.collection === undefined ? {} : { 'db.collection.name': summary.collection }),
  }
}

/** A JavaScript identifier: a function's own name, as opposed to source text or a path standing in for one. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** The hook's function name @fastify/otel recorded (`anonymous` for a function without one). */
function callbackNameOf(span: object): string {
  const recorded = (span as Partial<ReadableSpan>).attributes?.['hook.callback.name']
  const name = typeof recorded === 'string' ? recorded.replace(/^bound /, '') : ''
  return IDENTIFIER.test(name) ? name : 'anonymous'
}

/**
 * A hook's span name: its lifecycle stage and its function's name (`onRequest - authenticateRequest`);
 * a route handler is named by its route (`handler - GET /transactions/:transactionId`). Never the
 * plugin name @fastify/otel falls back to, which is source text or a file path.
 */
function lifecycleSpanName(stage: string, callback: string, request: { method: string; routeOptions: { url?: string } }): string {
  if (stage === 'handler') return `handler - ${httpSpanName(request.method, request.routeOptions.url)}`
  return `${stage} - ${callback}`
}
