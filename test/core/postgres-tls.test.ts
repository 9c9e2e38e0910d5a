import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { createDb } from '../../src/core/db/create-db.ts'
import { postgresTls } from '../../src/core/db/pg-tls.ts'
import { TlsFallbackSocket } from '../../src/core/db/pg-tls-fallback.ts'
import { parsePostgresUrl } from '../../src/core/db/postgres-url.ts'
import { testDialect } from '../helpers/build-app.ts'
import { freePort } from '../helpers/free-port.ts'
import { hasCommand } from '../helpers/has-command.ts'
import { ownedByPostgres, type PostgresServer, postgresWorkspace, privatePostgresUnavailable } from '../helpers/private-postgres.ts'
import { type CertificateFiles, createAuthority, issueCertificate } from '../helpers/test-certificates.ts'

// Issue 35 item 5: the connection string as pg_auto_failover prints it
// (`…?target_session_attrs=read-write&sslmode=prefer`) works unchanged: sslmode is read as libpq
// reads it, where node-postgres would take prefer, require and verify-ca for verify-full.

const triad = new URL('../../bin/triad.js', import.meta.url).pathname

const homes = mkdtempSync(join(tmpdir(), 'triad-homes-'))
after(() => rmSync(homes, { recursive: true, force: true }))

/** A home directory of the test's own, with ~/.postgresql holding `files` (libpq's default certificate paths). */
function homeWith(files: Record<string, string> = {}): string {
  const home = mkdtempSync(join(homes, 'home-'))
  mkdirSync(join(home, '.postgresql'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(home, '.postgresql', name), text)
  return home
}

/** What a pg.Client of the string's first host is given, read with no PG* variables set and `home` as the home directory. */
function clientTls(url: string, home = homeWith(), env: NodeJS.ProcessEnv = {}) {
  const parsed = parsePostgresUrl(url, 'DATABASE_URL', env)
  return postgresTls(parsed, home).forHost(parsed.hosts[0])
}

describe('sslmode in DATABASE_URL, read as libpq reads it', () => {
  it('gives node-postgres each mode as TLS settings of its own, and strips them from the string it parses', () => {
    assert.deepEqual(clientTls('postgres://h/db?sslmode=disable'), { ssl: false })
    assert.deepEqual(clientTls('postgres://h/db?sslmode=require'), { ssl: { rejectUnauthorized: false } })
    for (const mode of ['prefer', 'allow']) {
      const { ssl, stream } = clientTls(`postgres://h/db?sslmode=${mode}`)
      // node-postgres's own TLS stays off: the socket negotiates, and falls back, as libpq does.
      assert.equal(ssl, false)
      assert.ok(stream?.() instanceof TlsFallbackSocket)
    }
    const url = parsePostgresUrl('postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write&sslmode=prefer&sslrootcert=/ca.crt&application_name=triad', 'DATABASE_URL', {})
    assert.equal(url.forHost(url.hosts[1]), 'postgres://u@h2:5433/db?application_name=triad')
    assert.deepEqual(url.tls, { mode: 'prefer', rootCert: '/ca.crt', cert: undefined, key: undefined, password: undefined })
  })

  it('checks the chain against sslrootcert in verify-ca, and the host name too in verify-full', () => {
    const home = homeWith({ 'ca.crt': 'CA' })
    const rootCert = join(home, '.postgresql', 'ca.crt')
    const verifyCa = clientTls(`postgres://h/db?sslmode=verify-ca&sslrootcert=${rootCert}`, home).ssl
    assert.ok(verifyCa && typeof verifyCa === 'object')
    assert.equal(verifyCa.ca, 'CA')
    assert.equal(verifyCa.rejectUnauthorized, undefined)
    assert.equal(verifyCa.checkServerIdentity?.('h', {} as never), undefined)
    assert.deepEqual(clientTls(`postgres://h/db?sslmode=verify-full&sslrootcert=${rootCert}`, home).ssl, { ca: 'CA' })
  })

  it('uses ~/.postgresql/root.crt when sslrootcert is not given, and then checks the chain in require as well (as libpq)', () => {
    const home = homeWith({ 'root.crt': 'ROOT' })
    const require = clientTls('postgres://h/db?sslmode=require', home).ssl
    assert.ok(require && typeof require === 'object')
    assert.equal(require.ca, 'ROOT')
    assert.equal(typeof require.checkServerIdentity, 'function')
    assert.deepEqual(clientTls('postgres://h/db?sslmode=verify-full', home).ssl, { ca: 'ROOT' })
  })

  it('refuses verify-ca and verify-full without a root certificate file, naming the file it looked for', () => {
    const home = homeWith()
    for (const mode of ['verify-ca', 'verify-full']) {
      assert.throws(() => clientTls(`postgres://h/db?sslmode=${mode}`, home), {
        message: `DATABASE_URL: sslmode=${mode} checks the server's certificate, but the root certificate file ${join(home, '.postgresql', 'root.crt')} does not exist: give the authority's certificate in sslrootcert`,
      })
    }
    assert.throws(() => clientTls('postgres://h/db?sslmode=require&sslrootcert=/nowhere/ca.crt', home), /^Error: DATABASE_URL: cannot read sslrootcert \/nowhere\/ca\.crt: ENOENT/)
  })

  it('presents the client certificate of sslcert and sslkey (or ~/.postgresql/postgresql.crt and .key)', () => {
    const home = homeWith({ 'postgresql.crt': 'CERT', 'postgresql.key': 'KEY', 'other.crt': 'OTHER', 'other.key': 'OTHER KEY' })
    assert.deepEqual(clientTls('postgres://h/db?sslmode=require', home).ssl, { cert: 'CERT', key: 'KEY', rejectUnauthorized: false })
    const dir = join(home, '.postgresql')
    assert.deepEqual(clientTls(`postgres://h/db?sslmode=require&sslcert=${dir}/other.crt&sslkey=${dir}/other.key&sslpassword=pw`, home).ssl, {
      cert: 'OTHER',
      key: 'OTHER KEY',
      passphrase: 'pw',
      rejectUnauthorized: false,
    })
  })

  it('without sslmode connects in plain, as before (not libpq’s prefer), unless PGSSLMODE says otherwise', () => {
    assert.equal(parsePostgresUrl('postgres://h/db', 'DATABASE_URL', {}).tls.mode, 'disable')
    assert.equal(parsePostgresUrl('postgres://h/db', 'DATABASE_URL', { PGSSLMODE: 'require' }).tls.mode, 'require')
    assert.equal(parsePostgresUrl('postgres://h/db?sslmode=disable', 'DATABASE_URL', { PGSSLMODE: 'require' }).tls.mode, 'disable')
    assert.equal(parsePostgresUrl('postgres://h/db?requiressl=1', 'DATABASE_URL', {}).tls.mode, 'require')
    assert.equal(parsePostgresUrl('postgres://h/db?sslrootcert=system', 'DATABASE_URL', {}).tls.mode, 'verify-full')
    // libpq never uses TLS over a Unix socket.
    const socket = parsePostgresUrl('postgres://%2Fvar%2Frun%2Fpostgresql/db?sslmode=require', 'DATABASE_URL', {})
    assert.deepEqual(postgresTls(socket, homeWith()).forHost(socket.hosts[0]), { ssl: false })
  })

  it('refuses an sslmode libpq does not know, and node-postgres’s own ssl parameter, naming the variable', () => {
    assert.throws(() => parsePostgresUrl('postgres://h/db?sslmode=on', 'DATABASE_URL', {}), {
      message: 'DATABASE_URL: sslmode=on is not an sslmode libpq knows: one of disable, allow, prefer, require, verify-ca, verify-full',
    })
    assert.throws(() => parsePostgresUrl('postgres://h/db?sslmode=no-verify', 'DATABASE_READ_URL', {}), /^Error: DATABASE_READ_URL: sslmode=no-verify .*\(node-postgres's no-verify is libpq's require\)$/)
    assert.throws(() => parsePostgresUrl('postgres://h/db', 'DATABASE_URL', { PGSSLMODE: 'yes' }), /^Error: PGSSLMODE=yes is not an sslmode libpq knows/)
    assert.throws(() => parsePostgresUrl('postgres://h/db?ssl=true', 'DATABASE_URL', {}), /^Error: DATABASE_URL: ssl=true is node-postgres's parameter, which libpq refuses; say sslmode=verify-full/)
    assert.throws(() => parsePostgresUrl('postgres://h/db?sslrootcert=system&sslmode=require', 'DATABASE_URL', {}), /sslrootcert=system needs sslmode=verify-full/)
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://h1:5432,h2:5432/db?sslmode=preferred' }),
      (error: unknown) => error instanceof ConfigError && /^Invalid configuration: DATABASE_URL: sslmode=preferred is not an sslmode libpq knows/.test(error.message),
    )
  })

  it('gives up on a server that never answers SSLRequest within the connect timeout, and closes the connection', async () => {
    const accepted: Socket[] = []
    const silent = createServer((socket) => accepted.push(socket.resume())).listen(0, '127.0.0.1')
    await once(silent, 'listening')
    after(() => silent.close())
    const { port } = silent.address() as AddressInfo
    const database = await createDb(`postgres://u@127.0.0.1:${port}/db?sslmode=prefer`, { poolSize: 1 })
    try {
      await assert.rejects(database.ping(), /no database connection came free in time/)
    } finally {
      await database.destroy()
    }
    assert.equal(accepted.length, 1)
    if (!accepted[0].closed) await once(accepted[0], 'close', { signal: AbortSignal.timeout(5000) })
  })

  it('stops `triad serve` with an unknown sslmode: one line on stderr naming DATABASE_URL, exit code 1', () => {
    const result = spawnSync(process.execPath, [triad, 'serve'], {
      env: { ...process.env, DATABASE_URL: 'postgres://127.0.0.1:1/db?sslmode=bogus' },
      encoding: 'utf8',
      timeout: 30_000,
    })
    assert.equal(result.status, 1)
    assert.match(result.stderr, /^triad: Invalid configuration: DATABASE_URL: sslmode=bogus is not an sslmode libpq knows: one of disable, allow, prefer, require, verify-ca, verify-full\n$/)
  })
})

// The servers are started by the test itself (any PostgreSQL server binaries do); it runs with
// the PostgreSQL suite, like every test that needs more than SQLite. CI (.ci/run) has the
// binaries: there their absence fails the test instead of skipping it.
const skip =
  (testDialect !== 'postgres' && 'runs with the PostgreSQL suite (npm run test:pg): it starts PostgreSQL servers of its own') ||
  (!process.env.CI && (privatePostgresUnavailable ?? (!hasCommand('openssl') && 'openssl is not installed (it makes the test certificates)')))

describe('sslmode against real servers, one without TLS and one with it', { skip, timeout: 120_000 }, () => {
  let plain: PostgresServer
  let tls: PostgresServer
  let authority: CertificateFiles
  let otherAuthority: CertificateFiles
  let client: CertificateFiles
  const cleanups: Array<() => Promise<void> | void> = []
  after(async () => {
    for (const cleanup of cleanups) await cleanup()
  })

  before(async () => {
    const workspace = postgresWorkspace({ after: (cleanup) => cleanups.unshift(cleanup) }, 'triad-tls-')
    const certificates = join(workspace.dir, 'certificates')
    mkdirSync(certificates)
    authority = await createAuthority(certificates, 'authority')
    otherAuthority = await createAuthority(certificates, 'other-authority')
    const server = await issueCertificate(certificates, 'server', authority, 'localhost', ['DNS:localhost', 'IP:127.0.0.1'])
    client = await issueCertificate(certificates, 'client', authority, 'cert_user')
    // The server refuses a key that others can read.
    chmodSync(ownedByPostgres(server.key), 0o600)
    ownedByPostgres(certificates)

    plain = await workspace.createServer('plain')
    tls = await workspace.createServer('tls', {
      settings: [
        'ssl = on',
        `ssl_cert_file = '${server.cert}'`,
        `ssl_key_file = '${server.key}'`,
        `ssl_ca_file = '${authority.cert}'`,
        // 127.0.0.2 reaches the server under a name its certificate does not have.
        "listen_addresses = '127.0.0.1,127.0.0.2'",
      ],
      hba: [
        'local all all trust',
        // plain_only is refused over TLS, tls_only and cert_user over plain; postgres comes either way.
        'hostssl all plain_only 127.0.0.0/8 reject',
        'hostssl all cert_user 127.0.0.0/8 cert',
        'hostssl all all 127.0.0.0/8 trust',
        'host all postgres 127.0.0.0/8 trust',
        'host all plain_only 127.0.0.0/8 trust',
      ],
    })
    const admin = new pg.Client({ connectionString: tls.url })
    await admin.connect()
    await admin.query('create role plain_only login; create role tls_only login; create role cert_user login')
    await admin.end()
  })

  const urlOf = (server: PostgresServer, query: string, user = 'postgres', address = '127.0.0.1') => `postgres://${user}@${address}:${server.port}/postgres?${query}`

  /** Whether Triad's connection (createDb, one host) to `url` is encrypted, from the server's own view. */
  async function encrypted(url: string): Promise<boolean> {
    const database = await createDb(url, { poolSize: 1 })
    try {
      const { rows } = await sql<{ ssl: boolean }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(database.db)
      return rows[0].ssl
    } finally {
      await database.destroy()
    }
  }

  it('connects to a server without TLS with disable, allow and prefer, in plain', async () => {
    for (const mode of ['disable', 'allow', 'prefer']) assert.equal(await encrypted(urlOf(plain, `sslmode=${mode}`)), false, mode)
  })

  it('refuses a server without TLS with require, verify-ca and verify-full, saying why', async () => {
    for (const mode of ['require', 'verify-ca', 'verify-full']) {
      await assert.rejects(encrypted(urlOf(plain, `sslmode=${mode}&sslrootcert=${authority.cert}`)), {
        message: `127.0.0.1:${plain.port} does not offer TLS, which sslmode=${mode} requires`,
      })
    }
  })

  it('uses TLS with prefer and require where the server offers it, and plain with disable and allow', async () => {
    assert.equal(await encrypted(urlOf(tls, 'sslmode=prefer')), true)
    assert.equal(await encrypted(urlOf(tls, 'sslmode=require')), true)
    assert.equal(await encrypted(urlOf(tls, 'sslmode=disable')), false)
    assert.equal(await encrypted(urlOf(tls, 'sslmode=allow')), false)
  })

  it('with allow, tries TLS when the server refuses plain (hostssl only); disable then fails', async () => {
    assert.equal(await encrypted(urlOf(tls, 'sslmode=allow', 'tls_only')), true)
    assert.equal(await encrypted(urlOf(tls, 'sslmode=require', 'tls_only')), true)
    await assert.rejects(encrypted(urlOf(tls, 'sslmode=disable', 'tls_only')), /no pg_hba\.conf entry for host "127\.0\.0\.1", user "tls_only", database "postgres", no encryption/)
  })

  it('with prefer, goes on in plain when the server refuses the TLS session (hostnossl); require then fails', async () => {
    assert.equal(await encrypted(urlOf(tls, 'sslmode=prefer', 'plain_only')), false)
    await assert.rejects(encrypted(urlOf(tls, 'sslmode=require', 'plain_only')), /pg_hba\.conf rejects connection for host "127\.0\.0\.1", user "plain_only", database "postgres", SSL encryption/)
  })

  it('with prefer, goes on in plain too when the certificate check fails (a root certificate of another authority), as libpq', async () => {
    assert.equal(await encrypted(urlOf(tls, `sslmode=prefer&sslrootcert=${otherAuthority.cert}`)), false)
    assert.equal(await encrypted(urlOf(tls, `sslmode=prefer&sslrootcert=${authority.cert}`)), true)
  })

  it('reports the server’s own refusal when the other transport does not help either', async () => {
    // allow: plain refused (no such role), and the server offers no TLS to try instead.
    await assert.rejects(encrypted(urlOf(plain, 'sslmode=allow', 'nobody')), /^error: role "nobody" does not exist$/)
    // prefer: refused over TLS, then over plain as well.
    await assert.rejects(encrypted(urlOf(tls, 'sslmode=prefer', 'nobody')), /^error: role "nobody" does not exist$/)
  })

  it('with verify-ca, connects with the authority of sslrootcert and refuses another', async () => {
    assert.equal(await encrypted(urlOf(tls, `sslmode=verify-ca&sslrootcert=${authority.cert}`)), true)
    // verify-ca does not check the name: 127.0.0.2 is not in the certificate.
    assert.equal(await encrypted(urlOf(tls, `sslmode=verify-ca&sslrootcert=${authority.cert}`, 'postgres', '127.0.0.2')), true)
    await assert.rejects(encrypted(urlOf(tls, `sslmode=verify-ca&sslrootcert=${otherAuthority.cert}`)), new RegExp(`^Error: 127\\.0\\.0\\.1:${tls.port} \\(sslmode=verify-ca\\): self-signed certificate in certificate chain$`))
  })

  it('with verify-full, connects under a name of the certificate and refuses another', async () => {
    assert.equal(await encrypted(urlOf(tls, `sslmode=verify-full&sslrootcert=${authority.cert}`)), true)
    assert.equal(await encrypted(urlOf(tls, `sslmode=verify-full&sslrootcert=${authority.cert}`, 'postgres', 'localhost')), true)
    await assert.rejects(
      encrypted(urlOf(tls, `sslmode=verify-full&sslrootcert=${authority.cert}`, 'postgres', '127.0.0.2')),
      new RegExp(`^Error: 127\\.0\\.0\\.2:${tls.port} \\(sslmode=verify-full\\): Hostname/IP does not match certificate's altnames`),
    )
  })

  it('presents the client certificate of sslcert and sslkey (pg_hba.conf: cert)', async () => {
    assert.equal(await encrypted(urlOf(tls, `sslmode=verify-full&sslrootcert=${authority.cert}&sslcert=${client.cert}&sslkey=${client.key}`, 'cert_user')), true)
    await assert.rejects(encrypted(urlOf(tls, 'sslmode=require', 'cert_user')), /connection requires a valid client certificate/)
  })

  it('connects with the string as pg_autoctl prints it (several hosts, read-write, sslmode=prefer), to hosts with and without TLS', async () => {
    const down = await freePort()
    const uri = (...ports: number[]) => `postgres://postgres@${ports.map((port) => `127.0.0.1:${port}`).join(',')}/postgres?target_session_attrs=read-write&sslmode=prefer`
    for (const [ports, port, ssl] of [
      [[down, plain.port, tls.port], plain.port, false],
      [[tls.port, plain.port], tls.port, true],
    ] as const) {
      // Two lone servers: no standby, so no synchronous replication to require (pg-hosts.ts).
      const database = await createDb(uri(...ports), { poolSize: 1, requireSynchronousStandby: false })
      try {
        const { rows } = await sql<{ port: number; ssl: boolean }>`select inet_server_port() as port, ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(database.db)
        assert.deepEqual(rows[0], { port, ssl })
      } finally {
        await database.destroy()
      }
    }
  })

  it('starts Triad (`triad migrate`) on a server without TLS with sslmode=prefer, which once ended the start', () => {
    const result = spawnSync(process.execPath, [triad, 'migrate', '--only', 'authn'], {
      env: { ...process.env, DATABASE_URL: urlOf(plain, 'target_session_attrs=read-write&sslmode=prefer'), LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /migrated authn on postgres/)
  })
})
