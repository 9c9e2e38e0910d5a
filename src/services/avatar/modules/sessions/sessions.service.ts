import type { Clock } from '../../../../core/clock.ts'
import type { Action, Emotion } from '../../expressions.ts'
import type { SessionsRepository } from './sessions.repository.ts'
import type { MessageRow, NewMessage, SessionRow } from './sessions.table.ts'
import { avatarError } from '../../errors.ts'

export interface SessionsServiceDeps {
  repository: SessionsRepository
  clock: Clock
  sessionTtlMs: number
  historyLimit: number
  /** Told when sweeping expired sessions failed (it is tried again at the next append). */
  onSweepFailed?: (error: unknown) => void
}

export interface HistoryMessage {
  role: 'user' | 'assistant' | 'operator'
  content: string
  timestamp: string
  emotion?: Emotion
  action?: Action
}

/** How often (at most) one instance sweeps expired sessions out of the database. */
const SWEEP_INTERVAL_MS = 60_000

const sessionNotFound = (id: string) => avatarError('session_not_found', `Session not found: ${id}`)

function toHistoryMessage(row: MessageRow): HistoryMessage {
  const message: HistoryMessage = { role: row.role, content: row.content, timestamp: row.created_at }
  if (row.role !== 'user') {
    message.emotion = (row.emotion ?? 'neutral') as Emotion
    message.action = (row.action ?? 'idle') as Action
  }
  return message
}

/**
 * Conversation history kept in the database, so that it survives restarts and every instance
 * sees the same sessions. A session idle longer than the TTL is treated as gone everywhere
 * (lists, history, context) and swept away lazily.
 */
export function createSessionsService(deps: SessionsServiceDeps) {
  const { repository } = deps
  let lastSweep = Number.NEGATIVE_INFINITY

  const cutoff = () => new Date(deps.clock.now().getTime() - deps.sessionTtlMs).toISOString()
  const isActive = (session: SessionRow) => session.last_active_at >= cutoff()

  /**
   * Runs after an append has committed: its failure must not fail the request, or a say
   * answered 503 would be in the history. The next append tries again.
   */
  async function sweepIfDue(): Promise<void> {
    const now = deps.clock.now().getTime()
    if (now - lastSweep < SWEEP_INTERVAL_MS) return
    lastSweep = now
    try {
      await repository.deleteIdleSessions(cutoff())
    } catch (error) {
      lastSweep = Number.NEGATIVE_INFINITY
      deps.onSweepFailed?.(error)
    }
  }

  return {
    /**
     * The last messages of a session, for the model's context; none for a new or expired
     * session. What an operator made the avatar say is the avatar's line to the model.
     */
    async context(id: string): Promise<Array<HistoryMessage & { role: 'user' | 'assistant' }>> {
      const session = await repository.findSession(id)
      if (!session || !isActive(session)) return []
      return (await repository.listRecentMessages(id, deps.historyLimit)).map((row) => ({
        ...toHistoryMessage(row),
        role: row.role === 'user' ? 'user' : 'assistant',
      }))
    },

    /** Appends what an operator made the avatar say, marked as the operator's (an expired session starts afresh). */
    async recordOperator(id: string, said: { content: string; emotion: Emotion; action: Action; at: string }) {
      const message: NewMessage = { role: 'operator', content: said.content, emotion: said.emotion, action: said.action, created_at: said.at }
      await repository.append({ id, at: said.at, cutoff: cutoff(), messages: [message] })
      await sweepIfDue()
    },

    /**
     * Appends one exchange. A session that expired is started afresh (its old messages are
     * deleted in the same transaction), so an old id never brings back an old conversation.
     */
    async record(id: string, user: { content: string; at: string }, assistant: { content: string; emotion: Emotion; action: Action; at: string }) {
      const messages: NewMessage[] = [
        { role: 'user', content: user.content, emotion: null, action: null, created_at: user.at },
        { role: 'assistant', content: assistant.content, emotion: assistant.emotion, action: assistant.action, created_at: assistant.at },
      ]
      await repository.append({ id, at: assistant.at, cutoff: cutoff(), messages })
      await sweepIfDue()
    },

    async history(id: string): Promise<{ sessionId: string; messages: HistoryMessage[] }> {
      const found = await repository.findSessionWithMessages(id)
      if (!found || !isActive(found.session)) throw sessionNotFound(id)
      return { sessionId: id, messages: found.messages.map(toHistoryMessage) }
    },

    async list(options: { limit?: number; before?: string }) {
      const rows = await repository.listActiveSessions({ cutoff: cutoff(), limit: options.limit, beforeId: options.before })
      if (!rows) throw avatarError('validation_failed', 'before must be the id of a session from the previous page')
      return { sessions: rows.map((row) => ({ id: row.id, created_at: row.created_at, message_count: Number(row.message_count) })) }
    },

    /**
     * Deletes a session; true when there was an active one to clear. Deleting an unknown or
     * expired id is not an error (front ends delete on every "new conversation", chatted or
     * not); an expired one's rows go at once rather than at the next sweep.
     */
    async remove(id: string): Promise<boolean> {
      const session = await repository.findSession(id)
      if (!session) return false
      return (await repository.deleteSession(id)) && isActive(session)
    },
  }
}

export type SessionsService = ReturnType<typeof createSessionsService>
