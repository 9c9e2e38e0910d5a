import type { Kysely, Transaction } from 'kysely'
import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import { AppError } from '../../../../core/errors/app-error.ts'
import type { Action, Emotion } from '../chat/chat.constants.ts'
import * as repository from './sessions.repository.ts'
import type { ChatTables, MessageRow, NewMessage, SessionRow } from './sessions.table.ts'

export interface SessionsServiceDeps {
  database: Database
  clock: Clock
  sessionTtlMs: number
  historyLimit: number
}

export interface HistoryMessage {
  role: 'user' | 'assistant'
  content: string
  timestamp: string
  emotion?: Emotion
  action?: Action
}

interface PendingAppend {
  id: string
  at: string
  cutoff: string
  messages: NewMessage[]
}

/** Most appends committed in one SQLite transaction. */
const MAX_BATCH = 256

/** How often (at most) one instance sweeps expired sessions out of the database. */
const SWEEP_INTERVAL_MS = 60_000

const sessionNotFound = (id: string) => new AppError('session_not_found', `Session not found: ${id}`, { status: 404 })

export function toHistoryMessage(row: MessageRow): HistoryMessage {
  const message: HistoryMessage = { role: row.role, content: row.content, timestamp: row.created_at }
  if (row.role === 'assistant') {
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
  const database = { db: deps.database.db as Kysely<ChatTables>, dialect: deps.database.dialect }
  const db = database.db
  let lastSweep = Number.NEGATIVE_INFINITY

  const cutoff = () => new Date(deps.clock.now().getTime() - deps.sessionTtlMs).toISOString()
  const isActive = (session: SessionRow) => session.last_active_at >= cutoff()

  async function activeSession(id: string): Promise<SessionRow> {
    const session = await repository.findSession(db, id)
    if (!session || !isActive(session)) throw sessionNotFound(id)
    return session
  }

  async function sweepIfDue(): Promise<void> {
    const now = deps.clock.now().getTime()
    if (now - lastSweep < SWEEP_INTERVAL_MS) return
    lastSweep = now
    await repository.deleteIdleSessions(db, cutoff())
  }

  const appendIn = (trx: Transaction<ChatTables>, item: PendingAppend) =>
    repository.appendMessages(trx, database.dialect, item.id, item.at, item.cutoff, item.messages)
  const appendAlone = (item: PendingAppend) => withTransaction(database, (trx) => appendIn(trx, item))

  // SQLite has one writer and pays for each commit (a WAL write); appends that arrive together
  // share one transaction instead. Each caller still returns only after its rows are committed.
  // PostgreSQL runs the transactions of concurrent requests side by side over its pool.
  const queue: { item: PendingAppend; resolve: () => void; reject: (error: unknown) => void }[] = []
  let flushing = false

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH)
      try {
        await withTransaction(database, async (trx) => {
          for (const { item } of batch) await appendIn(trx, item)
        })
        for (const waiter of batch) waiter.resolve()
      } catch (error) {
        if (batch.length === 1) {
          batch[0].reject(error)
          continue
        }
        // One bad append must not fail the others: retry each on its own.
        for (const waiter of batch) await appendAlone(waiter.item).then(waiter.resolve, waiter.reject)
      }
    }
    flushing = false
  }

  function groupCommit(item: PendingAppend): Promise<void> {
    return new Promise((resolve, reject) => {
      queue.push({ item, resolve, reject })
      if (flushing) return
      flushing = true
      setImmediate(() => void flush())
    })
  }

  return {
    /** The last messages of a session, for the model's context; none for a new or expired session. */
    async context(id: string): Promise<HistoryMessage[]> {
      const session = await repository.findSession(db, id)
      if (!session || !isActive(session)) return []
      return (await repository.listRecentMessages(db, id, deps.historyLimit)).map(toHistoryMessage)
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
      const append: PendingAppend = { id, at: assistant.at, cutoff: cutoff(), messages }
      if (database.dialect === 'sqlite') await groupCommit(append)
      else await appendAlone(append)
      await sweepIfDue()
    },

    async history(id: string): Promise<{ sessionId: string; messages: HistoryMessage[] }> {
      await activeSession(id)
      return { sessionId: id, messages: (await repository.listMessages(db, id)).map(toHistoryMessage) }
    },

    async list(options: { limit?: number; before?: string }) {
      let before: { createdAt: string; id: string } | undefined
      if (options.before !== undefined) {
        const anchor = await repository.findSession(db, options.before)
        if (!anchor) {
          throw new AppError('validation_failed', 'before must be the id of a session from the previous page', { status: 400 })
        }
        before = { createdAt: anchor.created_at, id: anchor.id }
      }
      const rows = await repository.listActiveSessions(db, { cutoff: cutoff(), limit: options.limit, before })
      return { sessions: rows.map((row) => ({ id: row.id, created_at: row.created_at, message_count: Number(row.message_count) })) }
    },

    async remove(id: string): Promise<void> {
      await activeSession(id)
      if (!(await repository.deleteSession(db, id))) throw sessionNotFound(id)
    },
  }
}

export type SessionsService = ReturnType<typeof createSessionsService>
