import assert from 'node:assert/strict'

/**
 * The error body of each service (issue 13 §1), as assertions, and which service owns a path:
 * what the framework-error table and the fuzz suite check every error answer against.
 */
export type ErrorOwner = 'authn' | 'avatar' | 'payments' | 'paymentsClient' | 'page' | 'core'

export const errorShapes: Record<ErrorOwner, (body: unknown, status: number) => void> = {
  authn(body, status) {
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
    assert.equal(error.status, status)
  },
  avatar(body) {
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error), ['detail'])
    assert.equal(typeof error.detail, 'string')
  },
  payments(body, status) {
    if (status === 400) {
      if (Array.isArray(body)) {
        assert.ok(body.length > 0, 'a validation 400 names at least one field')
        for (const problem of body as Array<Record<string, unknown>>) assert.deepEqual(Object.keys(problem).sort(), ['field', 'message'])
        return
      }
      // A declined card: one processing error of paylike/processing-errors.
      assert.deepEqual(Object.keys(body as object).sort(), ['client', 'code', 'merchant', 'message', 'text'])
      return
    }
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error).sort(), ['code', 'message'])
    assert.match(String(error.code), /^[a-z_]+$/)
  },
  paymentsClient(body) {
    const error = body as Record<string, unknown>
    assert.match(String(error.code), /^[A-Z_]+$/)
    assert.equal(typeof error.message, 'string')
  },
  // The hosted page and the 3-D Secure frames are read by shoppers: their errors are pages (checked by content type).
  page() {},
  core(body) {
    const error = (body as { error: Record<string, unknown> }).error
    assert.equal(typeof error.code, 'string')
    assert.equal(typeof error.message, 'string')
    assert.equal(typeof error.requestId, 'string')
  },
}

const PAYMENTS_ROOTS = ['apps', 'me', 'merchants', 'identities', 'transactions', 'cards', 'lines', 'disputes', 'frauds']

/** The service that answers for `path` (without its query). */
export function ownerOf(path: string): ErrorOwner {
  const [first = '', second = ''] = path.split('/').filter(Boolean)
  // authn's API, and its SAML routes (/server/saml2, documented and answering even with SAML off).
  if (first === 'api' || (first === 'server' && (second === 'api' || second === 'saml2'))) return 'authn'
  if (first === 'v1' || first === 'avatar' || first === 'ws' || first === 'health') return 'avatar'
  if (first === 'pos' || (first === 'payments' && second === 'tds')) return 'page'
  // The merchant dashboard: its page and assets are read by people, its sign-in is merchant API.
  if (first === 'dashboard') return second === 'session' ? 'payments' : 'page'
  if (first === 'vault' || first === 'payments') return 'paymentsClient'
  if (PAYMENTS_ROOTS.includes(first)) return 'payments'
  return 'core'
}

/** Asserts that an error response is in the shape of the service that owns its path. */
export function assertOwnersErrorShape(path: string, status: number, contentType: string | undefined, body: string): void {
  const owner = ownerOf(path)
  if (owner === 'page') {
    assert.match(String(contentType), /^text\/html|^application\/json/, `${path}: shoppers' pages answer a page (or JSON for their API calls)`)
    return
  }
  assert.match(String(contentType), /^application\/json/, `${path}: ${status} is JSON`)
  errorShapes[owner](JSON.parse(body), status)
}
