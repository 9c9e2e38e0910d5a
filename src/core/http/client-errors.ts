import type { FastifyInstance, FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { coreError } from '../errors/codes.ts'
import type { ErrorBodyFormatter } from '../errors/error-handler.ts'
import { normalizeError } from '../errors/normalize.ts'

const REQUEST_LINE = /^[A-Z]+ (\/[^ \r\n?]*)/

/** What Node's HTTP parser refused, as one of our errors. */
function parserError(error: NodeJS.ErrnoException) {
  if (error.code === 'HPE_HEADER_OVERFLOW') return coreError('headers_too_large', 'The request headers are larger than the server accepts (16 kB)')
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return coreError('request_timeout', 'The request was not received in time')
  return coreError('bad_request', 'The request is not valid HTTP')
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (headers over the size
 * limit, a malformed request line, a timeout) never becomes a request, so no route or error
 * handler sees it. It is still answered in the shape of the service the path belongs to, when
 * the request line can be read from the bytes that failed, and logged.
 */
export function clientErrorHandler(bodyFor: (path: string) => ErrorBodyFormatter) {
  // Fastify calls it with the server instance as `this`.
  return function (this: FastifyInstance, parseFailure: Error, socket: Socket) {
    const error = parseFailure as NodeJS.ErrnoException & { rawPacket?: Buffer }
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const path = REQUEST_LINE.exec(error.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1] ?? '/'
    const normalized = normalizeError(parserError(error))
    const request = { id: randomUUID(), url: path, method: 'GET', headers: {} } as unknown as FastifyRequest
    this.log.info({ reqId: request.id, code: normalized.code, status: normalized.status, parserError: error.code }, normalized.message)
    if (socket.writable) {
      const body = JSON.stringify(bodyFor(path)(normalized, request))
      socket.write(
        `HTTP/1.1 ${normalized.status} ${STATUS_CODES[normalized.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${request.id}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy(error)
  }
}
