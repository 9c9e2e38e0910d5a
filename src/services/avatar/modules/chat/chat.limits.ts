import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { AppError } from '../../../../core/errors/app-error.ts'
import type { RateLimitResult } from '../../../../core/http/rate-limit.ts'
import { avatarError } from '../../errors.ts'

/**
 * The client a request counts against: its API key when it sends one (several users behind
 * one proxy then keep their own budgets), else its IP address. Keys are hashed so that they
 * never sit in memory or Redis in the clear. A WebSocket's frames count against the key of
 * its handshake request, so HTTP and WebSocket chats share one budget.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const header = request.headers['x-api-key']
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
  const key = (typeof header === 'string' && header) || bearer
  if (key) return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`
  return `ip:${request.ip}`
}

/** The 429 of a chat request over the limit (over WebSocket: its message in an error frame). */
export function rateLimitExceeded(result: RateLimitResult): AppError {
  return avatarError('rate_limited', `Rate limit exceeded. Try again in ${result.resetSeconds} seconds.`, { headers: { 'retry-after': String(result.resetSeconds) } })
}
