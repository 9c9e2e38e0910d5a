import { type Kysely, sql } from 'kysely'
import type { Database, DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { ChatDbExecutor, ChatTables, MessageRow, NewMessage, SessionRow } from './sessions.table.ts'

async function findSession(db: ChatDbExecutor, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('avatar_sessions').select(['id', 'created_at', 'last_active_at', 'message_count']).where('id', '=', id).executeTakeFirst()
}

/** The last `limit` messages of a session, oldest first. */
async function listRecentMessages(db: ChatDbExecutor, sessionId: string, limit: number): Promise<MessageRow[]> {
  if (limit <= 0) return []
  const rows = await db
    .selectFrom('avatar_messages')
    .select(['session_id', 'seq', 'role', 'content', 'emotion', 'action', 'created_at'])
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute()
  return rows.reverse()
}

async function listMessages(db: ChatDbExecutor, sessionId: string): Promise<MessageRow[]> {
  return db
    .selectFrom('avatar_messages')
    .select(['session_id', 'seq', 'role', 'content', 'emotion', 'action', 'created_at'])
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'asc')
    .execute()
}

// The statements of a chat turn, built once per dialect (building them cost more than running
// them) and run straight on SQLite's connection inside the append's transaction.
const upsertSession = prepared<ChatTables, 'id' | 'at' | 'cutoff' | 'added', { message_count: number }>((db, p) => {
  const upsert = sql<{ message_count: number }>`
    insert into avatar_sessions (id, created_at, last_active_at, message_count) values (${p.id}, ${p.at}, ${p.at}, ${p.added})
    on conflict (id) do update set
      message_count = case when avatar_sessions.last_active_at < ${p.cutoff} then ${p.added} else avatar_sessions.message_count + ${p.added} end,
      created_at = case when avatar_sessions.last_active_at < ${p.cutoff} then excluded.created_at else avatar_sessions.created_at end,
      last_active_at = excluded.last_active_at
    returning message_count`
  return { compile: () => upsert.compile(db) }
})

const deleteMessagesOf = prepared<ChatTables, 'id', never>((db, p) => db.deleteFrom('avatar_messages').where('session_id', '=', p.id))

const insertMessage = prepared<ChatTables, keyof MessageRow, never>((db, p) =>
  db.insertInto('avatar_messages').values({
    session_id: p.session_id,
    seq: p.seq,
    role: p.role,
    content: p.content,
    emotion: p.emotion,
    action: p.action,
    created_at: p.created_at,
  }),
)

/** The parameters of the two-row insert: each column of the first row with `0`, of the second with `1`. */
type PairKey = `${keyof MessageRow}${0 | 1}`

// A chat turn's exchange (the user's message and the reply) is one statement of two rows: one
// statement run instead of two on every turn, on both engines.
const insertMessagePair = prepared<ChatTables, PairKey, never>((db, p) =>
  db.insertInto('avatar_messages').values(
    ([0, 1] as const).map((i) => ({
      session_id: p[`session_id${i}`],
      seq: p[`seq${i}`],
      role: p[`role${i}`],
      content: p[`content${i}`],
      emotion: p[`emotion${i}`],
      action: p[`action${i}`],
      created_at: p[`created_at${i}`],
    })),
  ),
)

/** A message's column values, as the insert statements take them. */
function messageRow(sessionId: string, seq: number, message: NewMessage): MessageRow {
  return {
    session_id: sessionId,
    seq,
    role: message.role,
    content: message.content,
    emotion: message.emotion ?? null,
    action: message.action ?? null,
    created_at: message.created_at,
  }
}

/** Two rows' values as the pair statement's parameters: the first row's `seq` is `seq0`, the second's `seq1`. */
function pairParameters(pair: readonly [MessageRow, MessageRow]): Record<PairKey, unknown> {
  const parameters = {} as Record<PairKey, unknown>
  pair.forEach((row, index) => {
    for (const column of Object.keys(row) as (keyof MessageRow)[]) parameters[`${column}${index as 0 | 1}`] = row[column]
  })
  return parameters
}

/**
 * Adds messages to a session and returns the session's new message count. One upsert creates
 * the session on first use, starts an expired one afresh (idle since before `cutoff`: count,
 * creation time and, below, its old messages are reset) or bumps the count of a live one; the
 * count it returns reserves the sequence numbers, so concurrent appends to one session never
 * collide (PostgreSQL serialises them on the row, SQLite has one writer). Run in a
 * transaction, so that the count and the rows cannot part.
 */
async function appendMessages(
  db: ChatDbExecutor,
  dialect: DialectName,
  sessionId: string,
  at: string,
  cutoff: string,
  messages: NewMessage[],
): Promise<number> {
  const added = messages.length
  const { rows } = await upsertSession(db, dialect, { id: sessionId, at, cutoff, added })
  const total = Number(rows[0]?.message_count)
  if (!Number.isSafeInteger(total)) throw new Error('the session upsert returned no count')
  // A count equal to what was just added means a new session or a restarted one: clear any
  // messages left from before it expired (none for a new one).
  if (total === added) await deleteMessagesOf(db, dialect, { id: sessionId })
  const first = total - added + 1
  let index = 0
  for (; index + 1 < added; index += 2) {
    const pair = [messageRow(sessionId, first + index, messages[index]), messageRow(sessionId, first + index + 1, messages[index + 1])] as const
    await insertMessagePair(db, dialect, pairParameters(pair))
  }
  if (index < added) await insertMessage(db, dialect, messageRow(sessionId, first + index, messages[index]))
  return total
}

async function deleteSession(db: ChatDbExecutor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('avatar_sessions').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Deletes every session idle since before `cutoff` (their messages go with them). */
async function deleteIdleSessions(db: ChatDbExecutor, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('avatar_sessions').where('last_active_at', '<', cutoff).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Active sessions, newest first; `before` is the (created_at, id) of the last one of the previous page. */
async function listActiveSessions(
  db: ChatDbExecutor,
  options: { cutoff: string; limit?: number; before?: { createdAt: string; id: string } },
): Promise<SessionRow[]> {
  let query = db.selectFrom('avatar_sessions').select(['id', 'created_at', 'last_active_at', 'message_count']).where('last_active_at', '>=', options.cutoff)
  const before = options.before
  if (before) {
    // A row-value comparison, not `a < x or (a = x and b < y)`: both engines seek the index
    // straight to the cursor with it, where the OR form made them walk the index from the top.
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)))
  }
  query = query.orderBy('created_at', 'desc').orderBy('id', 'desc')
  if (options.limit !== undefined) query = query.limit(options.limit)
  return query.execute()
}

/** A session with its messages, oldest first; undefined when there is no such session. */
async function findSessionWithMessages(db: ChatDbExecutor, id: string): Promise<{ session: SessionRow; messages: MessageRow[] } | undefined> {
  const session = await findSession(db, id)
  return session && { session, messages: await listMessages(db, id) }
}

/** A page of active sessions after the one named `beforeId` (of the previous page); undefined when that one is unknown. */
async function listActiveSessionsAfter(db: ChatDbExecutor, options: { cutoff: string; limit?: number; beforeId?: string }): Promise<SessionRow[] | undefined> {
  let before: { createdAt: string; id: string } | undefined
  if (options.beforeId !== undefined) {
    const anchor = await findSession(db, options.beforeId)
    if (!anchor) return undefined
    before = { createdAt: anchor.created_at, id: anchor.id }
  }
  return listActiveSessions(db, { cutoff: options.cutoff, limit: options.limit, before })
}

/** One exchange to append: the session's id, the time of its last message, the expiry cutoff. */
export interface SessionAppend {
  id: string
  at: string
  cutoff: string
  messages: NewMessage[]
}

/**
 * The avatar's sessions and messages tables. Appends are prepared statements run in one
 * transaction each; on SQLite, appends that arrive together share one commit (core/db's group
 * commit). A caller sees an append that resolves once its rows are committed.
 */
export function createSessionsRepository(database: Database) {
  const db = database.db as Kysely<ChatTables>
  const { dialect } = database
  const owned = { db, dialect }

  return {
    findSession: (id: string) => findSession(db, id),
    /** The last `limit` messages of a session, oldest first. */
    listRecentMessages: (sessionId: string, limit: number) => listRecentMessages(db, sessionId, limit),
    /** A routed read (core/db/read-replica.ts): GET /v1/session/{id}/history shows what was acknowledged before it, from a standby or the primary. */
    findSessionWithMessages: (id: string) => database.routedRead((read) => findSessionWithMessages(read, id)),
    /**
     * Appends messages to a session (created on first use, started afresh when idle since
     * before `cutoff`); resolves once they are committed.
     */
    async append(item: SessionAppend): Promise<void> {
      await withTransaction(owned, (trx) => appendMessages(trx, dialect, item.id, item.at, item.cutoff, item.messages))
    },
    deleteSession: (id: string) => deleteSession(db, id),
    /** Deletes every session idle since before `cutoff` (their messages go with them). */
    deleteIdleSessions: (cutoff: string) => deleteIdleSessions(db, cutoff),
    /** A routed read, like the history. */
    listActiveSessions: (options: Parameters<typeof listActiveSessionsAfter>[1]) => database.routedRead((read) => listActiveSessionsAfter(read, options)),
  }
}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>
