import type { Insertable, Kysely, Selectable, Transaction } from 'kysely'

interface SessionsTable {
  id: string
  created_at: string
  /** The time of the last message; a session idle longer than AVATAR_SESSION_TTL has expired. */
  last_active_at: string
  message_count: number
}

interface MessagesTable {
  session_id: string
  /** 1, 2, 3… within the session: the conversation order. */
  seq: number
  /** `operator`: said by the avatar because an operator told it to (POST /v1/session/{id}/say), not by the model. */
  role: 'user' | 'assistant' | 'operator'
  content: string
  emotion: string | null
  action: string | null
  created_at: string
}

export interface ChatTables {
  avatar_sessions: SessionsTable
  avatar_messages: MessagesTable
}

export type SessionRow = Selectable<SessionsTable>
export type MessageRow = Selectable<MessagesTable>
export type NewMessage = Omit<Insertable<MessagesTable>, 'session_id' | 'seq'>
export type ChatDbExecutor = Kysely<ChatTables> | Transaction<ChatTables>
