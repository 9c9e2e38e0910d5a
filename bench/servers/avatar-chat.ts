// Yardstick for POST /v1/chat with a session on the mock reply (issue 16). Per request: parse and
// validate the JSON body (sessionId, userText), then in one BEGIN IMMEDIATE … COMMIT of its own
// run the statements Triad runs for a turn (the session upsert returning the count, the delete
// of a restarted session's old messages when the count says so, the two message inserts; same
// SQL, Triad's pragmas), and answer the bytes of Triad's mock reply.
// Each request commits on its own. Triad's group commit shares one COMMIT among the turns that
// arrive together, a fair win that shows as a ratio above 1.
import { bareFastify, config, inTransaction, openSqlite, serve, statements } from './kit.ts'

const { database, body, idleMs } = config<{ database: string; body: string; idleMs: number }>()
const db = openSqlite(database)
const sql = statements(db, {
  upsert: `
    insert into avatar_sessions (id, created_at, last_active_at, message_count) values (?, ?, ?, ?)
    on conflict (id) do update set
      message_count = case when avatar_sessions.last_active_at < ? then ? else avatar_sessions.message_count + ? end,
      created_at = case when avatar_sessions.last_active_at < ? then excluded.created_at else avatar_sessions.created_at end,
      last_active_at = excluded.last_active_at
    returning message_count`,
  clear: 'delete from "avatar_messages" where "session_id" = ?',
  insert: 'insert into "avatar_messages" ("session_id", "seq", "role", "content", "emotion", "action", "created_at") values (?, ?, ?, ?, ?, ?, ?)',
})
const answer = Buffer.from(body)
const reply = JSON.parse(body) as { replyText: string; emotion: string; action: string }

const app = bareFastify()
app.post(
  '/v1/chat',
  {
    schema: {
      body: {
        type: 'object',
        required: ['userText'],
        properties: { sessionId: { type: 'string', maxLength: 128 }, userText: { type: 'string', minLength: 1, maxLength: 4000 } },
      },
    },
  },
  async (request, response) => {
    const { sessionId, userText } = request.body as { sessionId?: string; userText: string }
    if (sessionId) {
      const now = new Date()
      const at = now.toISOString()
      const cutoff = new Date(now.getTime() - idleMs).toISOString()
      inTransaction(db, () => {
        const { message_count: total } = sql.upsert.get(sessionId, at, at, 2, cutoff, 2, 2, cutoff) as { message_count: number }
        if (total === 2) sql.clear.run(sessionId)
        sql.insert.run(sessionId, total - 1, 'user', userText, null, null, at)
        sql.insert.run(sessionId, total, 'assistant', reply.replyText, reply.emotion, reply.action, at)
      })
    }
    return response.type('application/json; charset=utf-8').send(answer)
  },
)
await serve(app)
