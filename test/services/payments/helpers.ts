import assert from 'node:assert/strict'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import { runCommand } from '../../../src/core/cli/command.ts'
import { createIdGenerator } from '../../../src/core/ids.ts'
import { type PaymentsExtra, paymentsService } from '../../../src/services/payments/app.ts'
import { cardExpiry, recordTransaction } from '../../../src/services/payments/modules/transactions/index.ts'
import { createEventRecorder } from '../../../src/services/payments/modules/webhooks/index.ts'
import type { PaymentsTables } from '../../../src/services/payments/tables.ts'
import { buildTestApp, type Cleanup, serviceBaseOf, type TestApp } from '../../helpers/build-app.ts'

export interface PaymentsTestApp extends TestApp {
  db: Kysely<PaymentsTables>
}

/** A Triad app serving payments only, on a fresh database with a manual clock. */
export async function paymentsApp(
  t: Cleanup,
  options: {
    env?: Record<string, string>
    deps?: Partial<PaymentsExtra>
    database?: TestApp['database']
    secretStore?: TestApp['secretStore']
    clock?: TestApp['clock']
  } = {},
): Promise<PaymentsTestApp> {
  const built = await buildTestApp(t, {
    services: ['payments'],
    env: options.env,
    clock: options.clock,
    database: options.database,
    secretStore: options.secretStore,
    deps: { payments: options.deps },
  })
  return { ...built, db: built.database.db as Kysely<PaymentsTables> }
}

export function basic(key: string): string {
  return `Basic ${Buffer.from(`:${key}`).toString('base64')}`
}

/** A list body in the Node client's line layout, parsed (and the layout asserted). */
export function parseList<T = Record<string, unknown>>(response: LightMyRequestResponse): T[] {
  const body = response.body
  assert.ok(body.startsWith('[\n') && body.endsWith('\n]'), `list layout: ${JSON.stringify(body.slice(0, 80))}`)
  const inner = body.slice(2, -2)
  if (inner === '') return []
  return inner.split(',\n').map((line) => {
    assert.ok(!line.includes('\n'), 'one item per line')
    return JSON.parse(line) as T
  })
}

export async function createApp(app: FastifyInstance, name?: string): Promise<{ id: string; key: string }> {
  const response = await app.inject({ method: 'POST', url: '/apps', payload: name === undefined ? {} : { name } })
  assert.equal(response.statusCode, 201, response.body)
  return response.json().app
}

export const merchantAttributes = {
  name: 'Coffee & John',
  currency: 'EUR',
  email: 'john@example.com',
  website: 'https://example.com',
  descriptor: 'Coffee & John',
  company: { country: 'DK' },
  test: true,
}

export async function createMerchant(
  app: FastifyInstance,
  key: string,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { id: string; currency: string }> {
  const response = await app.inject({
    method: 'POST',
    url: '/merchants',
    headers: { authorization: basic(key) },
    payload: { ...merchantAttributes, ...overrides },
  })
  assert.equal(response.statusCode, 201, response.body)
  return response.json().merchant
}

/**
 * An approved authorization, stored through the service layer (`recordTransaction`) as the
 * customer-side payment API does once the acquirer has approved it.
 */
export async function authorize(
  test: PaymentsTestApp,
  merchantId: string,
  options: {
    amount?: number
    currency?: string
    cardRef?: string | null
    expiry?: { year: number; month: number }
    last4?: string
    custom?: Record<string, unknown>
  } = {},
): Promise<string> {
  const merchant = await test.db.selectFrom('payments_merchants').select(['id', 'test', 'descriptor']).where('id', '=', merchantId).executeTakeFirstOrThrow()
  const expiry = options.expiry ?? { year: 2030, month: 8 }
  const ids = createIdGenerator(test.clock)
  const row = await recordTransaction(
    { db: test.db, database: test.database, ids, clock: test.clock, events: createEventRecorder({ ids, clock: test.clock, dialect: test.database.dialect }) },
    {
      merchant,
      amount: options.amount ?? 300,
      currency: options.currency ?? 'EUR',
      card: { ref: options.cardRef ?? null, bin: '410000', last4: options.last4 ?? '0000', expiry: cardExpiry(expiry.year, expiry.month), scheme: 'visa', codePresent: true },
      custom: options.custom ?? { orderId: 'o-1' },
      tds: 'full',
      recurring: false,
    },
  )
  return row.id
}

/** An app with a key, a test EUR merchant, and helpers bound to them. */
export async function merchantFixture(t: Cleanup, options: Parameters<typeof paymentsApp>[1] = {}) {
  const test = await paymentsApp(t, options)
  const owner = await createApp(test.app, 'Owner')
  const merchant = await createMerchant(test.app, owner.key)
  const headers = { authorization: basic(owner.key) }
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, extra: Record<string, string> = {}) =>
    test.app.inject({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  /** A second merchant of the owner's app, in live mode (test: false): its id. */
  const liveMerchant = async (): Promise<string> => {
    const response = await call('POST', '/merchants', {
      currency: 'EUR',
      email: 'a@shop.example',
      website: 'https://shop.example',
      descriptor: 'SHOP',
      company: { country: 'DK' },
      test: false,
    })
    if (response.statusCode !== 201) throw new Error(`live merchant: ${response.statusCode} ${response.body}`)
    return response.json().merchant.id
  }
  return { ...test, owner, merchant, headers, call, liveMerchant }
}

/** Runs `triad payments …` (the operator's CLI) against the test app's database and clock. */
export async function paymentsCli(test: TestApp, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const group = paymentsService.commands?.({ withService: (work) => work({ ...serviceBaseOf(test), config: test.config.payments }) })
  assert.ok(group)
  const code = await runCommand(group, argv, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}
