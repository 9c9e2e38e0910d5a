import { userInfo } from 'node:os'

/** libpq's sslmode values, weakest first. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
type SslMode = (typeof SSL_MODES)[number]

/**
 * Without sslmode in the string or PGSSLMODE: plain connections, as node-postgres (and Triad
 * before it read sslmode) makes them, not libpq's `prefer` (docs/decisions.md, "sslmode as libpq
 * reads it").
 */
const DEFAULT_SSL_MODE: SslMode = 'disable'

/** The TLS parameters of a connection string, each else from libpq's environment variable. */
interface PostgresTlsParameters {
  mode: SslMode
  /** sslrootcert: a file of CA certificates, or `system`; unset: ~/.postgresql/root.crt if it exists. */
  rootCert?: string
  /** sslcert and sslkey: the client's certificate and key files; unset: ~/.postgresql/postgresql.crt and .key if they exist. */
  cert?: string
  key?: string
  /** sslpassword: the passphrase of an encrypted sslkey. */
  password?: string
}

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
  /** The environment variable the string came from (DATABASE_URL, DATABASE_READ_URL), for messages. */
  variable: string
  hosts: PostgresHost[]
  /** libpq's `target_session_attrs`; `any` when absent. */
  targetSessionAttrs: string
  tls: PostgresTlsParameters
  /**
   * The same string for one of its hosts, without `target_session_attrs` and the TLS parameters:
   * what node-postgres reads (it would take sslmode=prefer, require and verify-ca for verify-full;
   * core/db/pg-tls.ts gives it the TLS settings instead).
   */
  forHost(host: PostgresHost): string
  /** The whole string again, without its password (for pg_dump and pg_restore, which read PGPASSWORD). */
  withoutPassword(): { url: string; hadPassword: boolean }
}

const DEFAULT_PORT = 5432
const SHAPE = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/

function parseHost(entry: string, whole: string, variable: string): PostgresHost {
  // An IPv6 address is bracketed: [::1]:5432.
  const match = /^(\[[^\]]+\]|[^:]*)(?::(\d+))?$/.exec(entry)
  if (!match) throw new Error(`${variable}: cannot read the host ${JSON.stringify(entry)} of ${JSON.stringify(whole)}`)
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2])
  if (!(port >= 1 && port <= 65535)) throw new Error(`${variable}: port ${match[2]} of ${JSON.stringify(entry)} is not a TCP port`)
  return { host: match[1] || 'localhost', port }
}

const isSslMode = (value: string): value is SslMode => (SSL_MODES as readonly string[]).includes(value)

/** Parameters for TLS alone, kept from node-postgres (requiressl is libpq's older sslmode=require; uselibpqcompat changes how node-postgres reads sslmode). */
const isTlsParameter = (name: string) => name.startsWith('ssl') || name === 'requiressl' || name === 'uselibpqcompat'

/** sslmode and its companions as libpq reads them: from the string, else from PGSSLMODE and the like. */
function readTls(params: URLSearchParams, variable: string, env: NodeJS.ProcessEnv): PostgresTlsParameters {
  // node-postgres's own switch, which libpq (pg_dump, psql) refuses: silently dropping it could turn TLS off.
  if (params.has('ssl')) throw new Error(`${variable}: ssl=${params.get('ssl')} is node-postgres's parameter, which libpq refuses; say sslmode=verify-full (what ssl=true meant), require or disable`)
  const fromEnv = (name: string) => env[name] || undefined
  const rootCert = params.get('sslrootcert') ?? fromEnv('PGSSLROOTCERT')
  const given = params.get('sslmode') ?? (params.get('requiressl') === '1' ? 'require' : undefined)
  const mode = given ?? fromEnv('PGSSLMODE') ?? (rootCert === 'system' ? 'verify-full' : DEFAULT_SSL_MODE)
  const source = given === undefined ? 'PGSSLMODE' : `${variable}: sslmode`
  if (!isSslMode(mode)) {
    const hint = mode === 'no-verify' ? " (node-postgres's no-verify is libpq's require)" : ''
    throw new Error(`${source}=${mode} is not an sslmode libpq knows: one of ${SSL_MODES.join(', ')}${hint}`)
  }
  // As libpq 16: the system's authorities vouch for host names, so only a check of the name means anything.
  if (rootCert === 'system' && mode !== 'verify-full') throw new Error(`${variable}: sslrootcert=system needs sslmode=verify-full (${source}=${mode})`)
  return {
    mode,
    rootCert,
    cert: params.get('sslcert') ?? fromEnv('PGSSLCERT'),
    key: params.get('sslkey') ?? fromEnv('PGSSLKEY'),
    password: params.get('sslpassword') ?? undefined,
  }
}

/**
 * Reads a postgres:// URL (from the environment variable `variable`). Like libpq (psql), a URL
 * without a user and no PGUSER connects as the operating-system user (node-postgres would read
 * $USER, often unset in services and CI), and sslmode is read as libpq reads it (core/db/pg-tls.ts).
 */
export function parsePostgresUrl(url: string, variable = 'DATABASE_URL', env: NodeJS.ProcessEnv = process.env): PostgresUrl {
  const match = SHAPE.exec(url)
  if (!match) throw new Error(`${variable}: ${JSON.stringify(url)} is not a postgres:// URL`)
  const [, scheme, credentials = '', hostList, path, query = ''] = match
  const hosts = hostList.split(',').map((entry) => parseHost(entry, url, variable))
  const params = new URLSearchParams(query.slice(1))
  const targetSessionAttrs = params.get('target_session_attrs') ?? 'any'
  params.delete('target_session_attrs')
  const tls = readTls(params, variable, env)
  for (const name of [...params.keys()]) if (isTlsParameter(name)) params.delete(name)
  const user = credentials.split(':')[0]
  const password = credentials.includes(':') ? credentials.slice(credentials.indexOf(':') + 1) : ''
  const defaultUser = user === '' && !env.PGUSER ? encodeURIComponent(userInfo().username) : user
  const search = params.toString()
  return {
    variable,
    hosts,
    targetSessionAttrs,
    tls,
    forHost: (host) =>
      `${scheme}://${defaultUser}${password === '' ? '' : `:${password}`}${defaultUser || password ? '@' : ''}${host.host}:${host.port}${path}${search ? `?${search}` : ''}`,
    withoutPassword: () => ({ url: `${scheme}://${user ? `${user}@` : ''}${hostList}${path}${query}`, hadPassword: password !== '' }),
  }
}
