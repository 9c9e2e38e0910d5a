// Same-statements yardstick for the frictionless checkout of Paylike's client API (issues 16,
// 27): the six requests a Paylike client and a browser make for a test payment with
// `test: {tds: {challenge: false}}`, each doing the work Triad's does with the same primitives
// and the same statements (same SQL, Triad's pragmas), on a bare Fastify: what is left between
// it and Triad is framework overhead (hooks, logging, schemas, Kysely). checkout-least-work.ts
// beside it does the least the flow needs instead.
//   POST /vault ×2      seal the card number / code with AES-256-GCM into a token
//   POST /payments      find the merchant by its client key (SELECT), open both tokens, ask
//                       whether each was spent (SELECT ×2), hash the payment's canonical form;
//                       answer the fingerprint challenge
//   POST /payments/challenges/tds-fingerprint
//                       the same checks, then signed method data and a signed hint (HMAC ×2)
//   POST /payments/tds/fingerprint
//                       the frame: its data's signature checked, the `tds-fp-done` hint signed
//   POST /payments      the same checks and both hints' signatures, then in one BEGIN IMMEDIATE
//                       … COMMIT both tokens spent and the sealed card stored, the sandbox card
//                       looked up (SELECT), and in a second one the transaction, the event's
//                       sequence (SELECT), the event, and the merchant's webhook endpoints
//                       (SELECT); answer its id
// Each payment commits on its own; Triad's group commit shares COMMITs among payments that
// arrive together. Triad's periodic sweep of expired spent tokens is left out (it is rare).
import { createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto'
import { bareFastify, config, inTransaction, openSqlite, pooledRandomBytes, serve, statements, timeOrderedId, transactionJson, type TransactionRow } from './kit.ts'

const { database, challengeBody, framePage, origin } = config<{ database: string; challengeBody: string; framePage: string; origin: string }>()
const db = openSqlite(database)
const sql = statements(db, {
  merchant: 'select "id", "name", "test", "descriptor", "currency", "tds_mode" from "payments_merchants" where "key" = ?',
  spent: 'select "token_hash" from "payments_vault_spent_tokens" where "token_hash" = ?',
  spend: 'insert into "payments_vault_spent_tokens" ("token_hash", "expires") values (?, ?) on conflict ("token_hash") do nothing',
  card: 'insert into "payments_vault_cards" ("id", "sealed", "created") values (?, ?, ?)',
  sandbox: 'select * from "payments_sandbox_cards" where "card_ref" = ?',
  transaction:
    'insert into "payments_transactions" ("id", "merchant_id", "test", "created", "currency", "amount", "descriptor", "captured_amount", "refunded_amount", "voided_amount", "disputed_amount", "lost_amount", "card_bin", "card_last4", "card_expiry", "card_scheme", "card_code_present", "card_ref", "custom", "text", "tds", "recurring", "successful", "error", "source_transaction_id") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  sequence: 'select max("subject_seq") as "last" from "payments_events" where "subject_id" = ?',
  event: 'insert into "payments_events" ("id", "merchant_id", "type", "subject_id", "subject_seq", "created", "data") values (?, ?, ?, ?, ?, ?, ?)',
  endpoints: 'select "id", "events" from "payments_webhook_endpoints" where "merchant_id" = ? and "status" = ? and "deleted" is null',
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
  return ['v2', keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

function open(sealed: string, aad: string): string {
  const [, , iv = '', tag = '', body = ''] = sealed.split('.')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
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
const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex')

/** JSON with every object's keys sorted, as Triad binds hints to a payment. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
      .map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

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

/** The checks every payment request makes: merchant, both tokens opened and not spent, the payment's binding, its proven hints. */
function check(payment: Payment) {
  const merchant = sql.merchant.get(payment.integration.key) as { id: string; test: number; descriptor: string; currency: string } | undefined
  if (!merchant) return undefined
  const number = JSON.parse(open(payment.card.number.token, 'vault-token')) as { v: string; e: number }
  JSON.parse(open(payment.card.code.token, 'vault-token'))
  const hashes = [tokenHash(payment.card.number.token), tokenHash(payment.card.code.token)]
  if (hashes.some((hash) => sql.spent.get(hash))) return undefined
  const { hints = [], ...rest } = payment
  const binding = createHash('sha256')
    .update(canonicalJson({ ...rest, card: { ...rest.card, number: rest.card.number.token, code: rest.card.code.token } }))
    .digest('base64url')
  const proven = new Set<string>()
  for (const hint of hints) {
    const [kind = '', stamp = '', given = ''] = hint.split('.')
    if (macMatches(hintKey, `${kind}.${stamp}.${binding}`, given)) proven.add(kind)
  }
  return { merchant, number: number.v, expires: new Date(number.e).toISOString(), hashes, binding, proven }
}

const json = 'application/json; charset=utf-8'
const app = bareFastify()
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, new URLSearchParams(String(body))))
app.post('/vault', { schema: { body: { type: 'object', required: ['type', 'value'], properties: { type: { enum: ['pcn', 'pcsc'] }, value: { type: 'string' } } } } }, async (request, reply) => {
  const { type, value } = request.body as { type: string; value: string }
  return reply.type(json).send(`{"token":${JSON.stringify(seal(JSON.stringify({ t: type, v: value, e: Date.now() + TOKEN_TTL_MS }), 'vault-token'))}}\n`)
})
app.post('/payments', { schema: paymentSchema }, async (request, reply) => {
  const payment = request.body as Payment
  const checked = check(payment)
  if (!checked) return reply.code(400).send()
  if (!checked.proven.has('tds-fp-start')) return reply.type(json).send(challenge)
  if (!checked.proven.has('tds-fp-done')) return reply.code(400).send()
  const { merchant, number } = checked
  const cardRef = `vcard_${timeOrderedId()}`
  const created = new Date().toISOString()
  inTransaction(db, () => {
    for (const hash of checked.hashes) sql.spend.run(hash, checked.expires)
    sql.card.run(cardRef, seal(number, `card:${cardRef}`), created)
  })
  sql.sandbox.get(cardRef)
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
  inTransaction(db, () => {
    sql.transaction.run(row.id, merchant.id, merchant.test, created, row.currency, row.amount, merchant.descriptor, 0, 0, 0, 0, 0, row.card_bin, row.card_last4, expiry, 'visa', 1, cardRef, null, null, 'full', 0, 1, null, null)
    const last = (sql.sequence.get(row.id) as { last: number | null }).last ?? 0
    sql.event.run(timeOrderedId(), merchant.id, 'transaction.authorized', row.id, last + 1, created, transactionJson(row, []).slice('{"transaction":'.length, -1))
    sql.endpoints.all(merchant.id, 'enabled')
  })
  return reply.type(json).send(`{"authorizationId":"${row.id}","transactionId":"${row.id}"}\n`)
})
app.post('/payments/challenges/tds-fingerprint', { schema: paymentSchema }, async (request, reply) => {
  const checked = check(request.body as Payment)
  if (!checked) return reply.code(400).send()
  const now = Date.now()
  const data = Buffer.from(JSON.stringify({ p: checked.binding, o: request.headers.origin ?? '*', t: now, mode: 'success' })).toString('base64url')
  const body = {
    action: `${origin}/payments/tds/fingerprint`,
    method: 'POST',
    fields: { threeDSMethodData: `${data}.${mac(methodKey, data)}` },
    timeout: 10000,
    hints: [sign('tds-fp-start', now, checked.binding)],
  }
  return reply.type(json).send(`${JSON.stringify(body)}\n`)
})
app.post('/payments/tds/fingerprint', async (request, reply) => {
  const [data = '', given = ''] = ((request.body as URLSearchParams).get('threeDSMethodData') ?? '').split('.')
  if (!macMatches(methodKey, data, given)) return reply.code(400).send()
  const frame = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { p: string; o: string; t: number }
  const page = `${pageHead}${JSON.stringify([sign('tds-fp-done', Date.now(), frame.p)])}${pageTail.replace('\u0000origin', JSON.stringify(frame.o))}`
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page)
})
await serve(app)
