import { telemetryHooks } from '../telemetry/hooks.ts'
import type { FastifyServerOptions } from 'fastify'
import { createBatchedStream } from './log-stream.ts'

// Query parameters whose values are credentials (short-lived tokens in download links, keys).
const SECRET_QUERY_PARAMETER = /token|key|password|secret|code/i

/** Removes secret query values from a URL before it is logged. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const params = new URLSearchParams(url.slice(queryStart + 1))
  for (const name of [...params.keys()]) {
    if (SECRET_QUERY_PARAMETER.test(name)) params.set(name, '[redacted]')
  }
  return `${url.slice(0, queryStart)}?${params.toString()}`
}

/** `stream` replaces the standard output (tests read the log lines from it). */
export function loggerOptions(level: string, pretty: boolean, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    // With tracing on, every line carries the ids of the span it was written in.
    ...(telemetryHooks.logIds ? { mixin: telemetryHooks.logIds } : {}),
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-xsrf-token"]', 'res.headers["set-cookie"]', 'res.headers.authorization'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
    ...(stream
      ? { stream }
      : pretty
      ? { transport: { target: prettyTransport(), options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : level === 'silent'
        ? {}
        : { stream: createBatchedStream(1) }),
  }
}

// Resolved from here, not by pino from its own folder, so that the dependency is visible where it is used.
function prettyTransport(): string {
  return import.meta.resolve('pino-pretty')
}
