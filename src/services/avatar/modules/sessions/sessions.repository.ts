import type { ChatDbExecutor, MessageRow, NewMessage, SessionRow } from './sessions.table.ts'

export async function findSession(db: ChatDbExecutor, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('avatar_sessions').select(['id', 'created_at', 'last_active_at', 'message_count']).where('id', '=', id).executeTakeFirst()
}

/** Locks the session row for the rest of the transaction on PostgreSQL (SQLite has one writer anyway). */
export async function findSessionForUpdate(db: ChatDbExecutor, id: string, dialect: 'sqlite' | 'postgres'): Promise<SessionRow | undefined> {
  const query = db.selectFrom('avatar_sessions').select(['id', 'created_at', 'last_active_at', 'message_count']).where('id', '=', id)
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
}

/** The last `limit` messages of a session, oldest first. */
export async function listRecentMessages(db: ChatDbExecutor, sessionId: string, limit: number): Promise<MessageRow[]> {
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

export async function listMessages(db: ChatDbExecutor, sessionId: string): Promise<MessageRow[]> {
  return db
    .selectFrom('avatar_messages')
    .select(['session_id', 'seq', 'role', 'content', 'emotion', 'action', 'created_at'])
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'asc')
    .execute()
}

/**
 * Adds messages to a session, creating it on first use, and returns the session's new
 * message count. The increment happens in the upsert itself, so two concurrent appends to
 * one session get distinct sequence numbers (PostgreSQL serialises them on the row).
 */
export async function appendMessages(db: ChatDbExecutor, sessionId: string, at: string, messages: NewMessage[]): Promise<number> {
  const added = messages.length
  const { message_count: count } = await db
    .insertInto('avatar_sessions')
    .values({ id: sessionId, created_at: at, last_active_at: at, message_count: added })
    .onConflict((conflict) =>
      conflict.column('id').doUpdateSet((eb) => ({ message_count: eb('avatar_sessions.message_count', '+', added), last_active_at: at })),
    )
    .returning('message_count')
    .executeTakeFirstOrThrow()
  const first = Number(count) - added + 1
  await db
    .insertInto('avatar_messages')
    .values(messages.map((message, index) => ({ ...message, session_id: sessionId, seq: first + index })))
    .execute()
  return Number(count)
}

export async function deleteSession(db: ChatDbExecutor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('avatar_sessions').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Deletes every session idle since before `cutoff` (their messages go with them). */
export async function deleteIdleSessions(db: ChatDbExecutor, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('avatar_sessions').where('last_active_at', '<', cutoff).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Active sessions, newest first; `before` is the (created_at, id) of the last one of the previous page. */
export async function listActiveSessions(
  db: ChatDbExecutor,
  options: { cutoff: string; limit?: number; before?: { createdAt: string; id: string } },
): Promise<SessionRow[]> {
  let query = db.selectFrom('avatar_sessions').select(['id', 'created_at', 'last_active_at', 'message_count']).where('last_active_at', '>=', options.cutoff)
  const before = options.before
  if (before) {
    query = query.where((eb) => eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]))
  }
  query = query.orderBy('created_at', 'desc').orderBy('id', 'desc')
  if (options.limit !== undefined) query = query.limit(options.limit)
  return query.execute()
}
