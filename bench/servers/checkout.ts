// Yardstick for the frictionless checkout round trip of Paylike's client API (issue 16): the five
// requests a Paylike client makes for a test payment with `test: {tds: {challenge: false}}`, each
// doing the work Triad's does with the same primitives, and the same writes (same SQL, Triad's
// pragmas):
//   POST /vault ×2         seal the card number / code with AES-256-GCM into a token
//   POST /payments         find the merchant by its client key (SELECT), open both tokens, ask
//                          whether either was spent (SELECT ×2), answer the fingerprint challenge
//   POST /payments/challenges/tds-fingerprint
//                          the same checks, then a signed hint (HMAC-SHA-256) and signed method data
//   POST /payments         the same checks and the hint's signature, then in one BEGIN IMMEDIATE …
//                          COMMIT mark both tokens spent and store the sealed card, look up the
//                          sandbox card (SELECT) and store the authorization; answer its id
// Each payment commits on its own; Triad's group commit shares COMMITs among payments that
// arrive together. Triad's periodic sweep of expired spent tokens is left out (it is rare).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto'
import { bareFastify, config, inTransaction, openSqlite, serve, statements, timeOrderedId } from './kit.ts'

const { database, challengeBody, origin } = config<{ database: string; challengeBody: string; origin: string }>()
const db = openSqlite(database)
const sql = statements(db, {
  merchant: 'select "id", "name", "test", "descriptor", "currency", "tds_mode" from "payments_merchants" where "key" = ?',
  spent: 'select "token_hash" from "payments_vault_spent_tokens" where "token_hash" = ?',
  spend: 'insert into "payments_vault_spent_tokens" ("token_hash", "expires") values (?, ?) on conflict ("token_hash") do nothing',
  card: 'insert into "payments_vault_cards" ("id", "sealed", "created") values (?, ?, ?)',
  sandbox: 'select * from "payments_sandbox_cards" where "card_ref" = ?',
  transaction:
    'insert into "payments_transactions" ("id", "merchant_id", "test", "created", "currency", "amount", "descriptor", "captured_amount", "refunded_amount", "voided_amount", "disputed_amount", "lost_amount", "card_bin", "card_last4", "card_expiry", "card_scheme", "card_code_present", "card_ref", "custom", "text", "tds", "recurring", "successful", "error", "source_transaction_id") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
})
const key = randomBytes(32)
const keyId = createHash('sha256').update(key).digest('hex').slice(0, 16)
const macKey = createHmac('sha256', key).update('triad-payments:tds').digest()
const challenge = Buffer.from(challengeBody)

function seal(plain: string, aad: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(aad))
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return ['v2', keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

function open(sealed: string, aad: string): string {
  const [, , iv = '', tag = '', body = ''] = sealed.split('.')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
}

const mac = (data: string) => createHmac('sha256', macKey).update(data).digest('base64url')
const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url')

interface Payment {
  integration: { key: string }
  amount: { currency: string; exponent: number; value: number }
  card: { number: { token: string }; code: { token: string }; expiry: { month: number; year: number } }
  hints?: string[]
}

const paymentSchema = {
  body: {
    type: 'object',
    required: ['integration', 'amount', 'card'],
    properties: {
      integration: { type: 'object', required: ['key'], properties: { key: { type: 'string' } } },
      amount: { type: 'object', required: ['currency', 'value'], properties: { currency: { type: 'string' }, exponent: { type: 'integer' }, value: { type: 'integer' } } },
      card: { type: 'object', required: ['number', 'expiry'] },
      hints: { type: 'array', items: { type: 'string' } },
      test: { type: 'object' },
    },
  },
}

/** The checks every payment request makes: merchant, both tokens opened and not spent. */
function check(payment: Payment) {
  const merchant = sql.merchant.get(payment.integration.key) as { id: string; test: number; descriptor: string; currency: string } | undefined
  if (!merchant) return undefined
  const number = open(payment.card.number.token, 'pcn')
  const code = open(payment.card.code.token, 'pcsc')
  const hashes = [tokenHash(payment.card.number.token), tokenHash(payment.card.code.token)]
  if (hashes.some((hash) => sql.spent.get(hash))) return undefined
  return { merchant, number, code, hashes }
}

const app = bareFastify()
app.post('/vault', { schema: { body: { type: 'object', required: ['type', 'value'], properties: { type: { enum: ['pcn', 'pcsc'] }, value: { type: 'string' } } } } }, async (request, reply) => {
  const { type, value } = request.body as { type: string; value: string }
  return reply.type('application/json; charset=utf-8').send(`{"token":${JSON.stringify(seal(value, type))}}\n`)
})
app.post('/payments', { schema: paymentSchema }, async (request, reply) => {
  const payment = request.body as Payment
  const checked = check(payment)
  if (!checked) return reply.code(400).send()
  const hint = payment.hints?.[0]
  if (!hint) return reply.type('application/json; charset=utf-8').send(challenge)
  const [, issued = '', signature = ''] = hint.split('.')
  if (mac(`${checked.hashes[0]}.${issued}`) !== signature) return reply.code(400).send()
  const { merchant, number } = checked
  const cardRef = timeOrderedId()
  const created = new Date().toISOString()
  const expires = new Date(Date.now() + 3_600_000).toISOString()
  inTransaction(db, () => {
    for (const hash of checked.hashes) sql.spend.run(hash, expires)
    sql.card.run(cardRef, seal(number, 'card'), created)
  })
  sql.sandbox.get(cardRef)
  const id = timeOrderedId()
  const expiry = new Date(Date.UTC(payment.card.expiry.year, payment.card.expiry.month, 1) - 1).toISOString()
  sql.transaction.run(id, merchant.id, merchant.test, created, payment.amount.currency, payment.amount.value, merchant.descriptor, 0, 0, 0, 0, 0, number.slice(0, 6), number.slice(-4), expiry, 'visa', 1, cardRef, null, null, 'full', 0, 1, null, null)
  return reply.type('application/json; charset=utf-8').send(`{"authorizationId":"${id}","transactionId":"${id}"}\n`)
})
app.post('/payments/challenges/tds-fingerprint', { schema: paymentSchema }, async (request, reply) => {
  const checked = check(request.body as Payment)
  if (!checked) return reply.code(400).send()
  const issued = Date.now().toString(36)
  const data = Buffer.from(JSON.stringify({ p: checked.hashes[0].slice(0, 43), o: '*', t: Date.now() + 10_000, mode: 'success' })).toString('base64url')
  const body = {
    action: `${origin}/payments/tds/fingerprint`,
    method: 'POST',
    fields: { threeDSMethodData: `${data}.${mac(data)}` },
    timeout: 10000,
    hints: [`tds-fp-start.${issued}.${mac(`${checked.hashes[0]}.${issued}`)}`],
  }
  return reply.type('application/json; charset=utf-8').send(`${JSON.stringify(body)}\n`)
})
await serve(app)
