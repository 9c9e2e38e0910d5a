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
