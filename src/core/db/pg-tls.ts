import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { type ConnectionOptions, getCACertificates } from 'node:tls'
import type pg from 'pg'
import { TlsFallbackSocket } from './pg-tls-fallback.ts'
import type { PostgresHost, PostgresUrl } from './postgres-url.ts'

/**
 * sslmode as libpq reads it, for node-postgres: it reads prefer, require and verify-ca as
 * verify-full and never falls back to a plain connection, so Triad gives each client its TLS
 * settings itself (and leaves them out of the string it parses, core/db/postgres-url.ts):
 * - disable: plain only.
 * - allow: plain; TLS if the server refuses the plain session (core/db/pg-tls-fallback.ts).
 * - prefer: TLS if the server offers it, else plain on the same connection; plain too if the
 *   handshake fails or the server refuses the TLS session.
 * - require: TLS, its certificate unchecked.
 * - verify-ca: TLS, the certificate signed by an authority of sslrootcert.
 * - verify-full: as verify-ca, and issued for the host's name.
 * As in libpq, a root certificate file that exists (sslrootcert, else ~/.postgresql/root.crt)
 * has the chain checked in every mode with TLS, and the client presents its own certificate
 * when sslcert (else ~/.postgresql/postgresql.crt) exists. Over a Unix socket libpq never uses TLS.
 */
export interface PostgresTls {
  /** `ssl` and `stream` of the pg.Client config for one host. */
  forHost(host: PostgresHost): Pick<pg.ClientConfig, 'ssl' | 'stream'>
  /** A failed connection, said with the host and sslmode when TLS was what failed (else the error itself). */
  explain(error: unknown, host: PostgresHost): unknown
}

/** pg's answer to a server that said no to TLS. */
const NO_TLS = 'The server does not support SSL connections'
/** Node's codes for a TLS handshake or certificate check that failed. */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED)/

/** The host part of a string that names a Unix socket directory (percent-encoded `/…`). */
const UNIX_SOCKET = /^(\/|%2f)/i

const skipHostNameCheck = () => undefined

function readTlsFile(variable: string, parameter: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new Error(`${variable}: cannot read ${parameter} ${path}: ${(error as Error).message}`, { cause: error })
  }
}

/** The tls.connect options of the string's sslmode; undefined for disable. Reads the certificate files (a missing one fails the start). */
function tlsOptions(url: PostgresUrl, home: string): ConnectionOptions | undefined {
  const { mode, rootCert, cert, key, password } = url.tls
  if (mode === 'disable') return undefined
  const read = (parameter: string, path: string) => readTlsFile(url.variable, parameter, path)
  const defaults = join(home, '.postgresql')
  const rootFile = rootCert ?? join(defaults, 'root.crt')
  const options: ConnectionOptions = {}
  if (rootCert === 'system') options.ca = getCACertificates('system')
  else if (rootCert !== undefined || existsSync(rootFile)) options.ca = read('sslrootcert', rootFile)
  else if (mode === 'verify-ca' || mode === 'verify-full') {
    throw new Error(`${url.variable}: sslmode=${mode} checks the server's certificate, but the root certificate file ${rootFile} does not exist: give the authority's certificate in sslrootcert`)
  }
  const certFile = cert ?? join(defaults, 'postgresql.crt')
  if (cert !== undefined || existsSync(certFile)) {
    options.cert = read('sslcert', certFile)
    options.key = read('sslkey', key ?? join(defaults, 'postgresql.key'))
    if (password !== undefined) options.passphrase = password
  }
  if (options.ca === undefined) options.rejectUnauthorized = false
  else if (mode !== 'verify-full') options.checkServerIdentity = skipHostNameCheck
  return options
}

export function postgresTls(url: PostgresUrl, home = homedir()): PostgresTls {
  const { mode } = url.tls
  const options = tlsOptions(url, home)
  return {
    forHost(host) {
      if (!options || UNIX_SOCKET.test(host.host)) return { ssl: false }
      // A copy for each client: pg marks the key of the object it is given as not enumerable.
      if (mode === 'allow' || mode === 'prefer') return { ssl: false, stream: () => new TlsFallbackSocket(mode, { ...options }) }
      return { ssl: { ...options } }
    },
    explain(error, host) {
      if (!options || !(error instanceof Error)) return error
      const where = `${host.host}:${host.port}`
      if (error.message === NO_TLS) return new Error(`${where} does not offer TLS, which sslmode=${mode} requires`, { cause: error })
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && TLS_FAILURE.test(code)) return new Error(`${where} (sslmode=${mode}): ${error.message}`, { cause: error })
      return error
    },
  }
}
