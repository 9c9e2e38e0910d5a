interface LoginFailuresTable {
  /** `account:<email>` or `ip:<address>`. */
  key: string
  failures: number
  last_failure_at: string
  blocked_until: string | null
}

/** The tables this module owns. */
export interface ThrottleTables {
  authn_login_failures: LoginFailuresTable
}
