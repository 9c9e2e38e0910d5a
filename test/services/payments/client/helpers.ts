import assert from 'node:assert/strict'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { merchantFixture } from '../helpers.ts'

export const VERSION = { 'accept-version': '1' }

/** A JSON value of the client API: one compact line ending with a newline. */
export function clientJson<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  assert.ok(response.body.endsWith('\n'), `ends with a newline: ${JSON.stringify(response.body)}`)
  assert.ok(!response.body.slice(0, -1).includes('\n'), 'one line')
  assert.match(String(response.headers['content-type']), /^application\/json/)
  return JSON.parse(response.body) as T
}

/** Asserts a 400 client error with `code` and returns its body. */
export function expectClientError(response: LightMyRequestResponse, code: string, status = 400): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body)
  const body = clientJson(response)
  assert.equal(body.code, code, response.body)
  assert.equal(typeof body.message, 'string')
  return body
}

export async function tokenize(app: FastifyInstance, type: 'pcn' | 'pcsc', value: string): Promise<{ token: string }> {
  const response = await app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload: { type, value } })
  assert.equal(response.statusCode, 200, response.body)
  return clientJson<{ token: string }>(response)
}

export interface PaymentOptions {
  number?: string
  code?: string
  amount?: { currency: string; exponent: number; value: number } | null
  expiry?: { month: number; year: number }
  test?: Record<string, unknown> | null
  key?: string
  text?: string
  custom?: unknown
}

/** A payment body with fresh vault tokens (the test object defaults to the frictionless flow). */
export async function paymentBody(app: FastifyInstance, key: string, options: PaymentOptions = {}): Promise<Record<string, unknown>> {
  const number = await tokenize(app, 'pcn', options.number ?? '4111111111111111')
  const code = await tokenize(app, 'pcsc', options.code ?? '123')
  const body: Record<string, unknown> = {
    integration: { key: options.key ?? key },
    card: { number, code, expiry: options.expiry ?? { month: 12, year: 2030 } },
    hints: [],
  }
  if (options.amount !== null) body.amount = options.amount ?? { currency: 'EUR', exponent: 2, value: 195 }
  if (options.test !== null) body.test = options.test ?? { tds: { challenge: false } }
  if (options.text !== undefined) body.text = options.text
  if (options.custom !== undefined) body.custom = options.custom
  return body
}

export const pay = (app: FastifyInstance, body: unknown, path = '/payments', headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: path, headers: { ...VERSION, ...headers }, payload: body as Record<string, unknown> })

/** The hints a 3-D Secure frame page hands to its parent. */
export function frameHints(html: string): string[] {
  const match = /postMessage\(\{hints:(\[[^\]]*\])\}/.exec(html)
  assert.ok(match, `the frame posts hints: ${html.slice(0, 300)}`)
  return JSON.parse(match[1]) as string[]
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/**
 * Runs the challenge loop as a client without a browser would: fetch and frame challenges
 * are completed by posting their forms directly; the challenge frame is approved or rejected.
 * Returns the final response.
 */
export async function runPayment(
  app: FastifyInstance,
  body: Record<string, unknown>,
  options: { decision?: 'approve' | 'reject' } = {},
): Promise<{ final: LightMyRequestResponse; steps: string[] }> {
  const steps: string[] = []
  let hints: string[] = [...((body.hints as string[] | undefined) ?? [])]
  for (let round = 0; round < 6; round++) {
    const response = await pay(app, { ...body, hints })
    if (response.statusCode !== 200) return { final: response, steps }
    const result = clientJson<{ challenges?: Array<{ name: string; type: string; path: string }> }>(response)
    if (!result.challenges) return { final: response, steps }
    const challenge = result.challenges[0]
    steps.push(challenge.name)
    const answer = await pay(app, { ...body, hints }, challenge.path)
    assert.equal(answer.statusCode, 200, answer.body)
    const frame = clientJson<{ action: string; fields: Record<string, string>; hints?: string[] }>(answer)
    hints = [...hints, ...(frame.hints ?? [])]
    const action = new URL(frame.action).pathname
    const page = await app.inject({ method: 'POST', url: action, headers: FORM, payload: form(frame.fields) })
    assert.equal(page.statusCode, 200, page.body)
    if (challenge.type === 'background-iframe') {
      if (page.body.includes('postMessage')) hints = [...hints, ...frameHints(page.body)]
      continue
    }
    const code = /data-testid="tds-code">(\d{6})</.exec(page.body)?.[1]
    assert.ok(code, 'the challenge page shows the code')
    const decision = options.decision ?? 'approve'
    const done = await app.inject({
      method: 'POST',
      url: `${action}/complete`,
      headers: FORM,
      payload: form({ creq: frame.fields.creq, code, decision }),
    })
    hints = [...hints, ...frameHints(done.body)]
  }
  throw new Error('the challenge loop did not end')
}

/** A merchant fixture plus the merchant's public key. */
export async function clientFixture(t: Parameters<typeof merchantFixture>[0], options: Parameters<typeof merchantFixture>[1] = {}) {
  const fixture = await merchantFixture(t, { ...options, env: { PAYMENTS_RATE_LIMIT: '0', ...options.env } })
  return { ...fixture, key: String(fixture.merchant.key) }
}
