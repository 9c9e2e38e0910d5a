import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../../../src/services/payments/tables.ts'
import { basic } from '../helpers.ts'

/** The owner (by its key) invites `email` to the merchant: the merchant user's id. */
export async function inviteUser(app: FastifyInstance, key: string, merchantId: string, email: string): Promise<string> {
  const invited = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/users`, headers: { authorization: basic(key) }, payload: { email } })
  assert.equal(invited.statusCode, 201, invited.body)
  const users = await app.inject({ url: `/merchants/${merchantId}/users?limit=100`, headers: { authorization: basic(key) } })
  const user = (users.json() as Array<{ id: string; email: string }>).find((item) => item.email === email)
  assert.ok(user, `${email} is a user of the merchant`)
  return user.id
}

const SIGN_IN_SUBJECTS = ['Your Triad Payments sign-in link', 'Dit login-link til Triad Payments']

/** The sign-in e-mails in the outbox for `email`, oldest first. */
export async function signInMails(db: Kysely<PaymentsTables>, email: string) {
  const rows = await db.selectFrom('payments_outbox').selectAll().where('recipient', '=', email).orderBy('id').execute()
  return rows.filter((row) => SIGN_IN_SUBJECTS.includes(row.subject))
}

/**
 * Waits (bounded) for the `count`-th sign-in e-mail to `email` (the link is sent after the
 * request is answered) and answers its link and token.
 */
export async function awaitSignInMail(db: Kysely<PaymentsTables>, email: string, count = 1, timeoutMs = 10_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const mails = await signInMails(db, email)
    if (mails.length >= count) {
      const mail = mails[count - 1]
      const link = /(https?:\/\/\S+#sign-in=([A-Za-z0-9_-]+))/.exec(mail.body)
      assert.ok(link, `a link in: ${mail.body}`)
      return { mail, link: link[1], token: link[2] }
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail(`no sign-in e-mail number ${count} to ${email}`)
}

/** Signs `email` (a merchant user) in by an e-mailed link: the cookie (name=value) and the CSRF token. */
export async function userSession(app: FastifyInstance, db: Kysely<PaymentsTables>, email: string, remoteAddress = '10.40.0.1') {
  const before = (await signInMails(db, email)).length
  const asked = await app.inject({ method: 'POST', url: '/dashboard/sign-in-link', remoteAddress, payload: { email } })
  assert.equal(asked.statusCode, 202, asked.body)
  const { token } = await awaitSignInMail(db, email, before + 1)
  const followed = await app.inject({ method: 'POST', url: '/dashboard/session/link', payload: { token } })
  assert.equal(followed.statusCode, 201, followed.body)
  const cookie = [followed.headers['set-cookie']].flat().find((value) => value?.startsWith('triad_dashboard='))
  assert.ok(cookie)
  return { cookie: cookie.split(';')[0], csrfToken: followed.json().session.csrfToken as string }
}
