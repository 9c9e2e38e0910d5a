import { userInfo } from 'node:os'

/** One host of a PostgreSQL connection string. */
export interface PostgresHost {
  host: string
  port: number
}

/**
 * A PostgreSQL connection string as libpq reads it, including the multi-host form that
 * pg_auto_failover's monitor hands out (`postgres://h1:5432,h2:5432/db?target_session_attrs=read-write`),
 * which neither WHATWG URL nor node-postgres parses.
 */
export interface PostgresUrl {
  hosts: PostgresHost[]
  /** libpq's `target_session_attrs`; `any` when absent. */
  targetSessionAttrs: string
  /** The same string for one of its hosts, without `target_session_attrs`: what node-postgres reads. */
  forHost(host: PostgresHost): string
  /** The whole string again, without its password (for pg_dump and pg_restore, which read PGPASSWORD). */
  withoutPassword(): { url: string; hadPassword: boolean }
}

const DEFAULT_PORT = 5432
const SHAPE = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/

function parseHost(entry: string, whole: string): PostgresHost {
  // An IPv6 address is bracketed: [::1]:5432.
  const match = /^(\[[^\]]+\]|[^:]*)(?::(\d+))?$/.exec(entry)
  if (!match) throw new Error(`DATABASE_URL: cannot read the host ${JSON.stringify(entry)} of ${JSON.stringify(whole)}`)
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2])
  if (!(port >= 1 && port <= 65535)) throw new Error(`DATABASE_URL: port ${match[2]} of ${JSON.stringify(entry)} is not a TCP port`)
  return { host: match[1] || 'localhost', port }
}

/**
 * Reads a postgres:// URL. Like libpq (psql), a URL without a user and no PGUSER connects as the
 * operating-system user (node-postgres would read $USER, often unset in services and CI).
 */
export function parsePostgresUrl(url: string): PostgresUrl {
  const match = SHAPE.exec(url)
  if (!match) throw new Error(`DATABASE_URL: ${JSON.stringify(url)} is not a postgres:// URL`)
  const [, scheme, credentials = '', hostList, path, query = ''] = match
  const hosts = hostList.split(',').map((entry) => parseHost(entry, url))
  const params = new URLSearchParams(query.slice(1))
  const targetSessionAttrs = params.get('target_session_attrs') ?? 'any'
  params.delete('target_session_attrs')
  const user = credentials.split(':')[0]
  const password = credentials.includes(':') ? credentials.slice(credentials.indexOf(':') + 1) : ''
  const defaultUser = user === '' && !process.env.PGUSER ? encodeURIComponent(userInfo().username) : user
  const search = params.toString()
  return {
    hosts,
    targetSessionAttrs,
    forHost: (host) =>
      `${scheme}://${defaultUser}${password === '' ? '' : `:${password}`}${defaultUser || password ? '@' : ''}${host.host}:${host.port}${path}${search ? `?${search}` : ''}`,
    withoutPassword: () => ({ url: `${scheme}://${user ? `${user}@` : ''}${hostList}${path}${query}`, hadPassword: password !== '' }),
  }
}
