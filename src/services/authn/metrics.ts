import type { MetricsRegistry } from '../../core/metrics/registry.ts'

type LoginOutcome = 'success' | 'failure' | 'throttled'

/** What authn records; its domain code calls these, whatever collects them (nothing when metrics are off). */
export interface AuthnMetrics {
  /** A login attempt: `method` is password, passkey or a federated method (oidc), anything else counts as other. */
  login(method: string, outcome: LoginOutcome): void
}

const METHODS = new Set(['password', 'oidc', 'passkey'])

export function createAuthnMetrics(registry: MetricsRegistry): AuthnMetrics {
  const logins = registry.counter({
    name: 'triad_authn_logins_total',
    help: 'Login attempts by method (password, oidc, passkey) and outcome (success, failure, throttled: refused before the password was checked)',
    labelNames: ['method', 'outcome'],
  })
  const throttled = registry.counter({ name: 'triad_authn_throttled_attempts_total', help: 'Password logins refused by the brute-force throttle (429)' })
  return {
    login(method, outcome) {
      logins.inc({ method: METHODS.has(method) ? method : 'other', outcome })
      if (outcome === 'throttled') throttled.inc()
    },
  }
}

export const noAuthnMetrics: AuthnMetrics = { login: () => {} }
