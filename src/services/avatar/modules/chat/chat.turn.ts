import type { FastifyBaseLogger } from 'fastify'
import { INTERNAL_ERROR_DETAIL } from '../../errors.ts'
import type { ChatReply } from './chat.constants.ts'
import type { ChatService, PreparedChat } from './chat.service.ts'

/** What a streamed turn sends, whatever carries it (SSE `data`, a WebSocket text frame). */
export type ChatEvent = { type: 'token'; content: string } | ({ type: 'done' } & ChatReply) | { type: 'error'; message: string }

const SHUTDOWN_MESSAGE = 'The server is restarting; please send the message again.'

export interface TurnOptions {
  log: FastifyBaseLogger
  /** Aborted when the client goes away: the model call stops and nothing is stored. */
  clientGone: AbortSignal
  /** Writes one event; resolves once the wire accepted it (so a slow reader slows the model's reading). */
  send(event: ChatEvent): Promise<void>
}

/**
 * One streamed chat turn, the same for every wire: the reply's tokens, then one `done` (the
 * exchange is stored) or one `error`. A stream can last as long as a model talks: on shutdown
 * a running reply goes on to its `done`; only one still running when the grace period ends
 * (`shutdownDeadline`) stops, with an error that asks the client to send the message again.
 */
export function createTurnRunner(chat: ChatService, shutdownDeadline: AbortSignal) {
  return async function runTurn(prepared: PreparedChat, options: TurnOptions): Promise<void> {
    const { clientGone, send, log } = options
    const stop = new AbortController()
    const onClientGone = () => stop.abort(clientGone.reason)
    const onDeadline = () => stop.abort(shutdownDeadline.reason)
    if (clientGone.aborted) onClientGone()
    else clientGone.addEventListener('abort', onClientGone, { once: true })
    if (shutdownDeadline.aborted) onDeadline()
    else shutdownDeadline.addEventListener('abort', onDeadline, { once: true })
    try {
      const outcome = await chat.stream(prepared, { log, signal: stop.signal, onToken: (content) => send({ type: 'token', content }) })
      if (outcome.type === 'done') await send({ type: 'done', ...outcome.reply })
      else if (outcome.type === 'error') await send({ type: 'error', message: outcome.message })
      else if (shutdownDeadline.aborted && !clientGone.aborted) await send({ type: 'error', message: SHUTDOWN_MESSAGE })
    } catch (error) {
      log.error({ err: error }, 'chat stream failed')
      await send({ type: 'error', message: INTERNAL_ERROR_DETAIL })
    } finally {
      shutdownDeadline.removeEventListener('abort', onDeadline)
      clientGone.removeEventListener('abort', onClientGone)
    }
  }
}

export type TurnRunner = ReturnType<typeof createTurnRunner>
