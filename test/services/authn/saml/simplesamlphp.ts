import assert from 'node:assert/strict'
import { once } from 'node:events'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cleanup } from '../../../helpers/build-app.ts'
import { freePort } from '../../../helpers/free-port.ts'
import { makeKeyPair } from './test-idp.ts'

/** Where Debian's simplesamlphp package puts the application (its web root is `www`). */
const SIMPLESAMLPHP = process.env.SIMPLESAMLPHP_PATH ?? '/usr/share/simplesamlphp'
/** Debian keeps the attribute maps (name2oid) with the configuration. */
const ATTRIBUTE_MAPS = process.env.SIMPLESAMLPHP_ATTRIBUTE_MAPS ?? '/etc/simplesamlphp/attributemap'
/** PHP extensions simplesamlphp 1.19 needs (its install guide's "always required"). */
const PHP_EXTENSIONS = ['dom', 'libxml', 'mbstring', 'openssl', 'zlib', 'session']

export const HTTP_POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

/**
 * Why the real-IdP suite is skipped, or false to run it. Without PHP or simplesamlphp a
 * newcomer's `npm test` skips it; in CI (.ci/run installs both) a missing piece is a failure.
 */
export function simpleSamlPhpSkipReason(): string | false {
  const problem = missingPiece()
  if (!problem) return false
  if (process.env.CI) throw new Error(`CI is set but ${problem}; .ci/run installs simplesamlphp, php-cli, php-xml and php-mbstring`)
  return problem
}

function missingPiece(): string | undefined {
  if (!existsSync(join(SIMPLESAMLPHP, 'www', 'saml2', 'idp', 'SSOService.php'))) return `no simplesamlphp at ${SIMPLESAMLPHP}`
  if (!existsSync(join(ATTRIBUTE_MAPS, 'name2oid.php'))) return `no simplesamlphp attribute maps at ${ATTRIBUTE_MAPS}`
  const modules = spawnSync('php', ['-m'], { encoding: 'utf8' })
  if (modules.status !== 0) return 'no php on PATH'
  const present = new Set(modules.stdout.split('\n').map((line) => line.trim().toLowerCase()))
  const missing = PHP_EXTENSIONS.filter((name) => !present.has(name))
  return missing.length > 0 ? `php lacks the extensions ${missing.join(', ')}` : undefined
}

/** A person the IdP knows, with the attributes it releases (by their LDAP names; the IdP maps them to urn:oid names). */
export interface IdpUser {
  username: string
  password: string
  attributes: { eduPersonPrincipalName: string; mail: string; givenName: string; sn: string; eduPersonAffiliation: string[] }
}

export interface SimpleSamlPhp {
  /** `http://127.0.0.1:<port>` */
  base: string
  entityId: string
  metadataUrl: string
  /** Registers a service provider from its SAML metadata (the XML Triad serves). */
  registerServiceProvider(metadataXml: string): void
  /** What the IdP logged so far (warnings and errors), for failure messages. */
  log(): string
}

const php = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
const phpList = (values: readonly string[]) => `[${values.map(php).join(', ')}]`

/**
 * Debian's simplesamlphp 1.19 as a SAML 2.0 identity provider, run by PHP's built-in web server
 * on a free port of 127.0.0.1 with a configuration directory of its own (SIMPLESAMLPHP_CONFIG_DIR):
 * `exampleauth:UserPass` with `users`, a key and certificate made now, attributes released under
 * their urn:oid names (core:AttributeMap name2oid) with an eduPersonTargetedID, assertions
 * signed and encrypted to the SP's certificate, the SSO service on both the HTTP-Redirect and
 * the HTTP-POST binding. Service providers are registered from their metadata XML. Stopped, and
 * its directory removed, when the test ends.
 */
export async function startSimpleSamlPhp(t: Cleanup, users: readonly IdpUser[]): Promise<SimpleSamlPhp> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const dir = mkdtempSync(join(tmpdir(), 'triad-simplesamlphp-'))
  for (const sub of ['metadata', 'cert', 'log', 'data', 'tmp', 'sessions']) mkdirSync(join(dir, sub))
  const keys = await makeKeyPair('simplesamlphp test IdP')
  writeFileSync(join(dir, 'cert', 'idp.pem'), keys.key, { mode: 0o600 })
  writeFileSync(join(dir, 'cert', 'idp.crt'), keys.cert)
  const secret = () => crypto.randomUUID().replaceAll('-', '')
  writeFileSync(
    join(dir, 'config.php'),
    `<?php
$config = [
  'baseurlpath' => ${php(`${base}/`)},
  'certdir' => ${php(join(dir, 'cert'))},
  'loggingdir' => ${php(join(dir, 'log'))},
  'datadir' => ${php(join(dir, 'data'))},
  'tempdir' => ${php(join(dir, 'tmp'))},
  'metadatadir' => ${php(join(dir, 'metadata'))},
  'attributenamemapdir' => ${php(ATTRIBUTE_MAPS)},
  'secretsalt' => ${php(secret())},
  'auth.adminpassword' => ${php(secret())},
  'technicalcontact_name' => 'Triad tests',
  'technicalcontact_email' => 'tests@example.org',
  'timezone' => 'UTC',
  'logging.level' => SimpleSAML\\Logger::WARNING,
  'logging.handler' => 'errorlog',
  'admin.checkforupdates' => false,
  'enable.saml20-idp' => true,
  'module.enable' => ['exampleauth' => true, 'core' => true, 'saml' => true],
  'store.type' => 'phpsession',
  'session.phpsession.savepath' => ${php(join(dir, 'sessions'))},
  // Plain http on 127.0.0.1: a Secure or SameSite=None cookie would never come back.
  'session.cookie.secure' => false,
  'session.cookie.samesite' => 'Lax',
  'metadata.sources' => [
    ['type' => 'flatfile'],
    ['type' => 'xml', 'file' => ${php(join(dir, 'metadata', 'service-providers.xml'))}],
  ],
];
`,
  )
  const userEntries = users
    .map((user) => {
      const a = user.attributes
      return `    ${php(`${user.username}:${user.password}`)} => [
      'eduPersonPrincipalName' => ${php(a.eduPersonPrincipalName)}, 'mail' => ${php(a.mail)},
      'givenName' => ${php(a.givenName)}, 'sn' => ${php(a.sn)}, 'eduPersonAffiliation' => ${phpList(a.eduPersonAffiliation)},
    ],`
    })
    .join('\n')
  writeFileSync(
    join(dir, 'authsources.php'),
    `<?php
$config = [
  'admin' => ['core:AdminPassword'],
  'users' => [
    'exampleauth:UserPass',
${userEntries}
  ],
];
`,
  )
  writeFileSync(
    join(dir, 'metadata', 'saml20-idp-hosted.php'),
    `<?php
$metadata['__DYNAMIC:1__'] = [
  'host' => '__DEFAULT__',
  'privatekey' => 'idp.pem',
  'certificate' => 'idp.crt',
  'auth' => 'users',
  'SingleSignOnServiceBinding' => ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', ${php(HTTP_POST_BINDING)}],
  'signature.algorithm' => 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'assertion.encryption' => true,
  'attributes.NameFormat' => 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri',
  'authproc' => [
    // eduPersonTargetedID (a NameID in the value, as SAML2 sends it), then every name to its urn:oid form.
    50 => ['class' => 'core:TargetedID', 'identifyingAttribute' => 'eduPersonPrincipalName', 'nameId' => true],
    100 => ['class' => 'core:AttributeMap', 'name2oid'],
  ],
];
`,
  )
  writeFileSync(join(dir, 'metadata', 'saml20-sp-remote.php'), '<?php\n')
  writeFileSync(join(dir, 'metadata', 'service-providers.xml'), '<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>\n')

  let log = ''
  const server: ChildProcess = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', join(SIMPLESAMLPHP, 'www')], {
    env: { ...process.env, SIMPLESAMLPHP_CONFIG_DIR: dir, PHP_CLI_SERVER_WORKERS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: the server forks workers, and all of them are stopped together.
    detached: true,
  })
  const collect = (chunk: Buffer) => {
    // The built-in server logs every request; keep what simplesamlphp itself says.
    for (const line of chunk.toString().split('\n')) if (line && !/ (Accepted|Closing|\[\d{3}\]: )/.test(line)) log += `${line}\n`
  }
  server.stdout?.on('data', collect)
  server.stderr?.on('data', collect)
  t.after(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = once(server, 'exit')
      if (server.pid !== undefined) process.kill(-server.pid, 'SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  const entityId = `${base}/saml2/idp/metadata.php`
  // PHP starts in well under a second; a loaded machine gets 20.
  for (let tries = 0; ; tries++) {
    const response = await fetch(entityId).catch(() => undefined)
    if (response?.ok && /IDPSSODescriptor/.test(await response.text())) break
    assert.ok(tries < 100 && server.exitCode === null, `simplesamlphp did not start on ${base}: ${log}`)
    await sleep(200)
  }
  return {
    base,
    entityId,
    metadataUrl: entityId,
    registerServiceProvider(metadataXml) {
      writeFileSync(join(dir, 'metadata', 'service-providers.xml'), metadataXml)
    },
    log: () => log,
  }
}
