// Yardstick for GET /api/authn/status with a valid token (issue 16). Per request it does what
// the route must: read the Bearer token, verify it with jose (HS256, `exp` required), run the
// SELECT of the session joined to its account that Triad runs (same SQL, same SQLite file
// layout, Triad's pragmas), check the account may log in, the session has not expired and the
// token is its current one, and answer the HAL bytes Triad answered for the same token.
// It caches nothing: every request verifies the signature and reads the row. Triad keeps
// verified tokens and session rows for up to a second (its revocation cache), a fair win that
// shows as a ratio above 1.
import { jwtVerify } from 'jose'
import { bareFastify, config, openSqlite, serve } from './kit.ts'

const { database, key, body } = config<{ database: string; key: string; body: string }>()
const secret = Buffer.from(key, 'hex')
const db = openSqlite(database)
const findSession = db.prepare(
  'select "authn_sessions"."id", "authn_sessions"."eperson_uuid", "authn_sessions"."method", "authn_sessions"."special_groups", "authn_sessions"."created_at", "authn_sessions"."expires_at", "authn_sessions"."current_jti", "authn_sessions"."current_iat", "authn_sessions"."current_exp", "authn_sessions"."previous_jti", "authn_sessions"."previous_valid_until", "authn_epersons"."email", "authn_epersons"."can_log_in", "authn_epersons"."first_name", "authn_epersons"."last_name", "authn_epersons"."created_at" as "eperson_created_at", "authn_epersons"."last_active" from "authn_sessions" inner join "authn_epersons" on "authn_epersons"."uuid" = "authn_sessions"."eperson_uuid" where "authn_sessions"."id" = ?',
)
const answer = Buffer.from(body)

const app = bareFastify()
app.get('/api/authn/status', async (request, reply) => {
  const header = request.headers.authorization
  const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined
  if (!token) return reply.code(401).send()
  const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], requiredClaims: ['exp'] })
  const session = findSession.get(String(payload.sid)) as { eperson_uuid: string; can_log_in: number; expires_at: string; current_jti: string } | undefined
  if (!session || session.eperson_uuid !== payload.eid || session.can_log_in !== 1 || Date.parse(session.expires_at) <= Date.now() || session.current_jti !== payload.jti)
    return reply.code(401).send()
  return reply.type('application/hal+json;charset=UTF-8').send(answer)
})
await serve(app)
