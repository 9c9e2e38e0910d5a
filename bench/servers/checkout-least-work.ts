// Least-work yardstick for the frictionless checkout (issue 27): the six requests a Paylike
// client makes for a test payment with `test: {tds: {challenge: false}}`, each doing only what
// the flow's promises require, the least way a bare server can (checkout.ts beside it runs
// Triad's own statements instead). Same request and response bytes as Triad; same promises:
// tokens that only the server can open and that are spent once, card numbers stored only
// sealed, hints that cannot be forged or moved to another payment, and the authorization
// stored with its outbox event in one database transaction.
//   POST /vault ×2      seal the number / code (AES-256-GCM, IVs from a pooled CSPRNG buffer) into
//                       a self-contained token: no database at all (a token row would cost an
//                       INSERT and a COMMIT, and a SELECT on every later use)
//   POST /payments      the merchant by its key (one SELECT), both tokens opened, one SELECT
//                       asking whether either was spent; the fingerprint challenge (fixed bytes)
//   POST /payments/challenges/tds-fingerprint
//                       the same checks; the payment's hash (SHA-256), then one HMAC each for the
//                       frame's signed data and the `tds-fp-start` hint
//   POST /payments/tds/fingerprint
//                       the frame: one HMAC to check its data, one to sign `tds-fp-done`; no
//                       database
//   POST /payments      the merchant (SELECT), both tokens opened, the payment's hash, one HMAC
//                       per hint; then one BEGIN IMMEDIATE … COMMIT: both tokens spent in one
//                       INSERT (a conflict there is the spent check: no SELECT before it), the
//                       card sealed and stored, the transaction row and its event row (the
//                       outbox; fanning it out to webhook endpoints is the delivery worker's
//                       job, not the request's)
// It caches nothing between requests and commits each payment on its own. Errors answer a bare
// 400; the measured flow has none.
import { createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto'
import { bareFastify, config, inTransaction, openSqlite, pooledRandomBytes, serve, statements, timeOrderedId, transactionJson, type TransactionRow } from './kit.ts'

const { database, challengeBody, framePage, origin } = config<{ database: string; challengeBody: string; framePage: string; origin: string }>()
const db = openSqlite(database)
const sql = statements(db, {
  merchant: 'select "id", "test", "descriptor", "currency" from "payments_merchants" where "key" = ?',
  spent: 'select count(*) as "n" from "payments_vault_spent_tokens" where "token_hash" in (?, ?)',
  spend: 'insert into "payments_vault_spent_tokens" ("token_hash", "expires") values (?, ?), (?, ?) on conflict ("token_hash") do nothing',
  card: 'insert into "payments_vault_cards" ("id", "sealed", "created") values (?, ?, ?)',
  transaction:
    'insert into "payments_transactions" ("id", "merchant_id", "test", "created", "currency", "amount", "descriptor", "captured_amount", "refunded_amount", "voided_amount", "disputed_amount", "lost_amount", "card_bin", "card_last4", "card_expiry", "card_scheme", "card_code_present", "card_ref", "custom", "text", "tds", "recurring", "successful", "error", "source_transaction_id") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  event: 'insert into "payments_events" ("id", "merchant_id", "type", "subject_id", "subject_seq", "created", "data") values (?, ?, ?, ?, 1, ?, ?)',
})

const TOKEN_TTL_MS = 30 * 60_000
const secret = randomBytes(32)
const key = createSecretKey(secret)
const keyId = createHash('sha256').update('triad/key-id\0').update(secret.toString('hex')).digest('hex').slice(0, 16)
const macKey = (purpose: string) => createSecretKey(createHmac('sha256', key).update(`triad-payments:${purpose}`).digest())
const hintKey = macKey('hint')
const methodKey = macKey('tds-method')
const [pageHead = '', pageTail = ''] = framePage.split('\u0000hints')
const challenge = Buffer.from(challengeBody)

function seal(plain: string, aad: string): string {
  const iv = pooledRandomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(aad))
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return `v2.${keyId}.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${body.toString('base64url')}`
}

function open(sealed: string, aad: string): string | undefined {
  const [version, id, iv = '', tag = '', body = ''] = sealed.split('.')
  if (version !== 'v2' || id !== keyId) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(aad))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}

const mac = (macKey: ReturnType<typeof createSecretKey>, data: string) => createHmac('sha256', macKey).update(data).digest('base64url')
const macMatches = (macKey: ReturnType<typeof createSecretKey>, data: string, given: string) => {
  const expected = Buffer.from(mac(macKey, data))
  const actual = Buffer.from(given)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}
const sign = (kind: string, issued: number, payment: string) => {
  const stamp = issued.toString(36)
  return `${kind}.${stamp}.${mac(hintKey, `${kind}.${stamp}.${payment}`)}`
}

function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1 && (digit *= 2) > 9) digit -= 9
    sum += digit
  }
  return sum % 10 === 0
}

type TokenRef = string | { token: string }
interface Payment {
  integration: { key: string }
  amount: { currency: string; exponent: number; value: number }
  card: { number: TokenRef; code: TokenRef; expiry: { month: number; year: number } }
  test?: { tds?: { challenge?: boolean; fingerprint?: string } }
  hints?: string[]
}

const money = { type: 'object', required: ['currency', 'exponent', 'value'], properties: { currency: { type: 'string', pattern: '^[A-Z]{3}$' }, exponent: { type: 'integer', minimum: 0, maximum: 12 }, value: { type: 'integer', minimum: 0 } } }
const token = { anyOf: [{ type: 'string', maxLength: 512 }, { type: 'object', required: ['token'], properties: { token: { type: 'string', maxLength: 512 } } }] }
const paymentSchema = {
  body: {
    type: 'object',
    required: ['integration', 'amount', 'card'],
    properties: {
      integration: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, maxLength: 100 } } },
      amount: money,
      card: {
        type: 'object',
        required: ['number', 'code', 'expiry'],
        properties: {
          number: token,
          code: token,
          expiry: { type: 'object', required: ['month', 'year'], properties: { month: { type: 'integer', minimum: 1, maximum: 12 }, year: { type: 'integer', minimum: 2000, maximum: 2099 } } },
        },
      },
      test: { type: 'object' },
      hints: { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 512 } },
    },
  },
}

class Refused extends Error {}

/** What each payment request checks: a known merchant in test mode, a known currency, both tokens opened, of their types, unexpired. */
function check(payment: Payment) {
  const merchant = sql.merchant.get(payment.integration.key) as { id: string; test: number; descriptor: string; currency: string } | undefined
  if (!merchant || merchant.test !== 1 || payment.test === undefined || payment.amount.exponent !== 2 || payment.amount.value <= 0) throw new Refused()
  const numberToken = typeof payment.card.number === 'string' ? payment.card.number : payment.card.number.token
  const codeToken = typeof payment.card.code === 'string' ? payment.card.code : payment.card.code.token
  const number = JSON.parse(open(numberToken, 'vault-token') ?? 'null') as { t: string; v: string; e: number } | null
  const code = JSON.parse(open(codeToken, 'vault-token') ?? 'null') as { t: string; v: string; e: number } | null
  const now = Date.now()
  if (number?.t !== 'pcn' || code?.t !== 'pcsc' || number.e <= now || code.e <= now) throw new Refused()
  const hashes = [createHash('sha256').update(numberToken).digest('hex'), createHash('sha256').update(codeToken).digest('hex')] as const
  return { merchant, number: number.v, expires: new Date(number.e).toISOString(), hashes, now }
}

/** Whether neither token was spent (the first two payment requests ask; the last one's INSERT does). */
function unspent(hashes: readonly [string, string]): boolean {
  return (sql.spent.get(hashes[0], hashes[1]) as { n: number }).n === 0
}

/** What hints bind to: the payment without its hints. */
function bindingOf(payment: Payment): string {
  const { hints: _hints, ...rest } = payment
  return createHash('sha256').update(JSON.stringify(rest)).digest('base64url')
}

function provenKinds(hints: readonly string[], binding: string, now: number): Set<string> {
  const proven = new Set<string>()
  for (const hint of hints) {
    const [kind = '', stamp = '', given = ''] = hint.split('.')
    const age = now - Number.parseInt(stamp, 36)
    if (age >= -60_000 && age <= TOKEN_TTL_MS && macMatches(hintKey, `${kind}.${stamp}.${binding}`, given)) proven.add(kind)
  }
  return proven
}

const json = 'application/json; charset=utf-8'
const app = bareFastify()
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, new URLSearchParams(String(body))))
app.setErrorHandler((error, _request, reply) => reply.code(error instanceof Refused || (error as { validation?: unknown }).validation ? 400 : 500).send())

app.post(
  '/vault',
  { schema: { body: { type: 'object', required: ['type', 'value'], properties: { type: { enum: ['pcn', 'pcsc'] }, value: { type: 'string', maxLength: 64 } } } } },
  async (request, reply) => {
    const { type, value } = request.body as { type: 'pcn' | 'pcsc'; value: string }
    const digits = value.replace(/[\s-]/g, '')
    if (type === 'pcsc' ? !/^\d{3,4}$/.test(digits) : !/^\d{10,19}$/.test(digits) || !luhn(digits)) throw new Refused()
    const sealed = seal(JSON.stringify({ t: type, v: digits, e: Date.now() + TOKEN_TTL_MS }), 'vault-token')
    return reply.type(json).send(`{"token":"${sealed}"}\n`)
  },
)

app.post('/payments', { schema: paymentSchema }, async (request, reply) => {
  const payment = request.body as Payment
  const checked = check(payment)
  const proven = payment.hints?.length ? provenKinds(payment.hints, bindingOf(payment), checked.now) : new Set<string>()
  if (!proven.has('tds-fp-start')) {
    if (!unspent(checked.hashes)) throw new Refused()
    return reply.type(json).send(challenge)
  }
  // Frictionless needs the frame's proof; the challenge round is not measured here.
  if (payment.test?.tds?.challenge !== false || !proven.has('tds-fp-done')) throw new Refused()
  const { merchant, number, hashes, expires } = checked
  const created = new Date(checked.now).toISOString()
  const cardRef = `vcard_${timeOrderedId()}`
  const sealed = seal(number, `card:${cardRef}`)
  const expiry = new Date(Date.UTC(payment.card.expiry.year, payment.card.expiry.month, 1) - 1).toISOString()
  const row: TransactionRow = {
    id: timeOrderedId(),
    merchant_id: merchant.id,
    test: merchant.test,
    created,
    currency: payment.amount.currency,
    amount: payment.amount.value,
    descriptor: merchant.descriptor,
    captured_amount: 0,
    refunded_amount: 0,
    voided_amount: 0,
    disputed_amount: 0,
    lost_amount: 0,
    card_bin: number.slice(0, 6),
    card_last4: number.slice(-4),
    card_expiry: expiry,
    card_scheme: 'visa',
    card_code_present: 1,
    tds: 'full',
    recurring: 0,
    successful: 1,
  }
  const event = transactionJson(row, []).slice('{"transaction":'.length, -1)
  inTransaction(db, () => {
    if (Number(sql.spend.run(hashes[0], expires, hashes[1], expires).changes) !== 2) throw new Refused()
    sql.card.run(cardRef, sealed, created)
    sql.transaction.run(row.id, row.merchant_id, row.test, created, row.currency, row.amount, row.descriptor, 0, 0, 0, 0, 0, row.card_bin, row.card_last4, expiry, 'visa', 1, cardRef, null, null, 'full', 0, 1, null, null)
    sql.event.run(timeOrderedId(), merchant.id, 'transaction.authorized', row.id, created, event)
  })
  return reply.type(json).send(`{"authorizationId":"${row.id}","transactionId":"${row.id}"}\n`)
})

app.post('/payments/challenges/tds-fingerprint', { schema: paymentSchema }, async (request, reply) => {
  const payment = request.body as Payment
  const checked = check(payment)
  if (!unspent(checked.hashes)) throw new Refused()
  const binding = bindingOf(payment)
  if (payment.hints?.length && provenKinds(payment.hints, binding, checked.now).has('tds-fp-start')) throw new Refused()
  const data = Buffer.from(JSON.stringify({ p: binding, o: request.headers.origin ?? '*', t: checked.now, mode: 'success' })).toString('base64url')
  return reply
    .type(json)
    .send(
      `{"action":"${origin}/payments/tds/fingerprint","method":"POST","fields":{"threeDSMethodData":"${data}.${mac(methodKey, data)}"},"timeout":10000,"hints":["${sign('tds-fp-start', checked.now, binding)}"]}\n`,
    )
})

app.post('/payments/tds/fingerprint', async (request, reply) => {
  const [data = '', given = ''] = ((request.body as URLSearchParams).get('threeDSMethodData') ?? '').split('.')
  if (!macMatches(methodKey, data, given)) throw new Refused()
  const frame = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { p: string; o: string; t: number }
  const now = Date.now()
  if (!(now - frame.t <= TOKEN_TTL_MS)) throw new Refused()
  const page = `${pageHead}${JSON.stringify([sign('tds-fp-done', now, frame.p)])}${pageTail.replace('\u0000origin', JSON.stringify(frame.o))}`
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page)
})

await serve(app)
