import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parse } from 'yaml'
import { configSchemas, loadConfig } from '../../src/config.ts'
import { parseDuration } from '../../src/core/config/duration.ts'
import { parseRedisUrl } from '../../src/core/config/redis-url.ts'
import { hasCommand } from '../helpers/has-command.ts'
import { startNginx } from '../helpers/nginx.ts'
import { startTriadProcess } from '../helpers/triad-process.ts'

// The files of deploy/ cannot be run here (no docker, no systemd as PID 1): they are parsed and
// checked against the configuration Triad reads, and the nginx configuration is run for real
// in front of two Triad processes when nginx is installed.

const root = new URL('../../', import.meta.url).pathname
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const configKeys = new Set(configSchemas.flatMap((schema) => Object.keys(schema.properties as object)))

interface ComposeService {
  build?: { context: string; dockerfile: string }
  image?: string
  environment?: Record<string, string>
  env_file?: Array<{ path: string }>
  ports?: string[]
  volumes?: string[]
  stop_grace_period?: string
  stop_signal?: string
  read_only?: boolean
  healthcheck?: { test: string[] }
  networks?: { default?: { ipv4_address?: string } }
}

const compose = parse(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> }

/** Compose's `${NAME:-default}` with nothing set: the default. */
const withDefaults = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')

/** `KEY=value` lines of an environment file (comments and blank lines skipped). */
function envFile(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
  return Object.fromEntries(entries)
}

describe('deploy/compose.yaml', () => {
  const triads = ['triad-a', 'triad-b'].map((name) => compose.services[name])

  it('runs two Triad instances, nginx, PostgreSQL and Redis', () => {
    assert.deepEqual(Object.keys(compose.services).sort(), ['postgres', 'proxy', 'redis', 'triad-a', 'triad-b'])
    for (const triad of triads) {
      assert.equal(triad?.build?.dockerfile, 'deploy/Dockerfile')
      assert.ok(existsSync(join(root, 'deploy', triad?.build?.context ?? '', triad?.build?.dockerfile ?? '')), 'the Dockerfile is where the build points')
      assert.equal(triad?.read_only, true, 'nothing is kept in an instance')
      assert.ok(!triad?.volumes, 'no data directory: SQLite is for one machine only')
    }
  })

  it('gives the instances only variables Triad reads, with values it accepts, sharing the database and Redis', () => {
    for (const triad of triads) {
      const environment = Object.fromEntries(Object.entries(triad?.environment ?? {}).map(([key, value]) => [key, withDefaults(String(value))]))
      for (const key of Object.keys(environment)) assert.ok(configKeys.has(key), `${key} is a Triad configuration variable`)
      const config = loadConfig(environment)
      assert.equal(config.core.host, '0.0.0.0')
      assert.equal(new URL(config.core.databaseUrl).hostname, 'postgres', 'one PostgreSQL for both')
      assert.equal(new URL(config.core.redisUrl ?? '').hostname, 'redis', 'one Redis for both')
      assert.deepEqual(config.core.trustProxy, [compose.services.proxy?.networks?.default?.ipv4_address], 'they believe X-Forwarded-For from nginx only')
      // Docker's SIGKILL must come after Triad's own stop: the grace period, a second to cut what is left, the database closing.
      assert.equal(triad?.stop_signal, 'SIGTERM')
      assert.ok(parseDuration(triad?.stop_grace_period ?? '0s') >= config.core.shutdownTimeoutMs + 2_000, 'stop_grace_period outlasts SHUTDOWN_TIMEOUT')
      assert.match(triad?.healthcheck?.test.join(' ') ?? '', /\/readyz/)
      assert.deepEqual(
        triad?.env_file?.map((file) => file.path),
        ['triad.env'],
        'the secrets come from one file shared by both',
      )
    }
    const postgres = compose.services.postgres?.environment ?? {}
    const url = new URL(withDefaults(String(triads[0]?.environment?.DATABASE_URL)))
    assert.equal(url.username, postgres.POSTGRES_USER)
    assert.equal(url.pathname, `/${postgres.POSTGRES_DB}`)
    assert.equal(url.password, withDefaults(String(postgres.POSTGRES_PASSWORD)))
  })

  it('has an example environment file of real variables, the secrets among them', () => {
    const example = envFile(read('deploy/triad.env.example'))
    for (const key of Object.keys(example)) assert.ok(configKeys.has(key), `${key} is a Triad configuration variable`)
    assert.ok('AUTHN_SECRET' in example && 'PAYMENTS_VAULT_KEY' in example, 'every instance gets the same secrets')
  })

  it('publishes nginx on the port nginx listens on, and nginx spreads over the instances on their port', () => {
    const nginx = read('deploy/nginx.conf')
    const listen = /^\s*listen (\d+);/m.exec(nginx)?.[1]
    assert.deepEqual(compose.services.proxy?.ports, [`${listen}:${listen}`])
    assert.ok(compose.services.proxy?.volumes?.includes('./nginx.conf:/etc/nginx/nginx.conf:ro'))
    const servers = [...nginx.matchAll(/^\s*server ([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`)
    assert.deepEqual(
      servers,
      triads.map((triad, index) => `${['triad-a', 'triad-b'][index]}:${triad?.environment?.PORT}`),
    )
    for (const directive of ['proxy_buffering off;', 'proxy_http_version 1.1;', 'proxy_set_header Upgrade $http_upgrade;', 'proxy_set_header Connection $connection_upgrade;', 'proxy_read_timeout 1h;']) {
      assert.ok(nginx.includes(directive), directive)
    }
  })
})

describe('deploy/triad.service', () => {
  const unit = read('deploy/triad.service')
  const settings = new Map(
    unit
      .split('\n')
      .filter((line) => /^\w+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )

  it('stops gracefully within Triad own timeout, reads one environment file, and is hardened', () => {
    assert.equal(settings.get('KillSignal'), 'SIGTERM')
    const shutdown = loadConfig({}).core.shutdownTimeoutMs
    assert.ok(Number(settings.get('TimeoutStopSec')) * 1000 >= shutdown + 2_000, 'systemd waits longer than SHUTDOWN_TIMEOUT before SIGKILL')
    assert.equal(settings.get('EnvironmentFile'), '/etc/triad/triad.env')
    for (const [key, value] of Object.entries({ NoNewPrivileges: 'yes', ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes', CapabilityBoundingSet: '' })) {
      assert.equal(settings.get(key), value, key)
    }
    assert.match(settings.get('ExecStart') ?? '', /bin\/triad\.js serve$/)
  })

  it('passes systemd-analyze verify', { skip: !hasCommand('systemd-analyze') && 'systemd-analyze is not installed' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'triad-unit-'))
    // Where the repository is here, instead of /srv/triad, so the command it names exists.
    writeFileSync(join(dir, 'triad.service'), unit.replaceAll('/srv/triad/', root))
    const result = spawnSync('systemd-analyze', ['verify', join(dir, 'triad.service')], { encoding: 'utf8' })
    const complaints = `${result.stdout}${result.stderr}`
      .split('\n')
      .filter((line) => line.includes('triad.service'))
      // The user exists on a machine set up as the unit's header says, not here.
      .filter((line) => !/User=|Group=|user triad|group triad/i.test(line))
    assert.deepEqual(complaints, [])
  })
})

/** The directives of a Redis configuration file, by name (`sentinel monitor`, `requirepass`…), each with its arguments. */
function redisDirectives(path: string): Map<string, string[]> {
  const directives = new Map<string, string[]>()
  for (const line of read(path).split('\n')) {
    const words = line.trim().split(/\s+/)
    if (words[0] === '' || words[0].startsWith('#')) continue
    const name = words[0] === 'sentinel' ? words.splice(0, 2).join(' ') : (words.shift() ?? '')
    directives.set(name, words)
  }
  return directives
}

// test/faults/redis-sentinel.test.ts runs these files (ports, passwords and timings put in); here
// their placeholders are checked to agree with each other and with the example REDIS_URL.
describe('deploy/redis', () => {
  it('has a master, its replica and a sentinel that agree on addresses, passwords and the master name, as the example REDIS_URL does', () => {
    const [master, replica, sentinel] = ['master.conf', 'replica.conf', 'sentinel.conf'].map((file) => redisDirectives(`deploy/redis/${file}`))
    const masterAddress = [master.get('bind')?.[0], master.get('port')?.[0]]
    assert.deepEqual(replica.get('replicaof'), masterAddress)
    const [name, ...monitored] = sentinel.get('sentinel monitor') ?? []
    assert.deepEqual(monitored, [...masterAddress, '2'])
    const password = master.get('requirepass')?.[0]
    for (const node of [master, replica]) assert.deepEqual([node.get('requirepass')?.[0], node.get('masterauth')?.[0]], [password, password])
    assert.deepEqual(sentinel.get('sentinel auth-pass'), [name, password])
    for (const node of [master, replica]) assert.deepEqual([node.get('save')?.[0], node.get('appendonly')?.[0]], ['""', 'no'])

    const example = /^# REDIS_URL=(redis\+sentinel:\/\/.+)$/m.exec(read('deploy/triad.env.example'))?.[1] ?? assert.fail('no Sentinel REDIS_URL in deploy/triad.env.example')
    const location = parseRedisUrl(loadConfig({ REDIS_URL: example }).core.redisUrl ?? '')
    assert.equal(location.kind, 'sentinel')
    assert.equal(location.masterName, name)
    assert.equal(location.password, password)
    assert.equal(location.sentinelPassword, sentinel.get('requirepass')?.[0])
    assert.equal(location.sentinels.length, 3)
    assert.ok(location.sentinels.every((address) => String(address.port) === sentinel.get('port')?.[0]))
  })
})

describe('deploy/pg-auto-failover/pgautofailover.service', () => {
  // test/ha/*.ha.ts run the scripts beside it; the unit only systemd can run.
  const skip = (!hasCommand('systemd-analyze') && 'systemd-analyze is not installed') || (!hasCommand('pg_autoctl') && 'pg_autoctl is not installed')
  it('passes systemd-analyze verify', { skip }, () => {
    const result = spawnSync('systemd-analyze', ['verify', join(root, 'deploy/pg-auto-failover/pgautofailover.service')], { encoding: 'utf8' })
    const complaints = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.includes('pgautofailover.service'))
    assert.deepEqual(complaints, [])
  })
})

describe('deploy/nginx.conf in front of two Triad processes', { timeout: 480_000, skip: !hasCommand('nginx') && 'nginx is not installed (apt-get install nginx)' }, () => {
  it('spreads requests round robin, streams events unbuffered and passes WebSockets', { timeout: 480_000 }, async (t) => {
    const env = { TRIAD_SERVICES: 'avatar', AVATAR_MOCK_TOKEN_DELAY: '150ms', AVATAR_RATE_LIMIT: '0', LOG_LEVEL: 'info', TRUST_PROXY: '127.0.0.1' }
    const [a, b] = await Promise.all([startTriadProcess(t, env), startTriadProcess(t, env)])
    const nginx = await startNginx(t, [new URL(a.base).host, new URL(b.base).host])
    const proxy = nginx.base
    const port = new URL(proxy).port

    // Round robin: ten requests, five to each instance (each logs the path it served).
    for (let index = 0; index < 10; index++) assert.equal((await fetch(`${proxy}/v1/session/rr-${index}/history`)).status, 404)
    const served = (process: typeof a) => (process.output().match(/\/v1\/session\/rr-\d+\/history/g) ?? []).length
    for (let waited = 0; served(a) + served(b) < 10 && waited < 50; waited++) await sleep(100)
    assert.deepEqual([served(a), served(b)], [5, 5])

    // Server-Sent Events arrive as they are written: the first token long before the last.
    const started = performance.now()
    const response = await fetch(`${proxy}/v1/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userText: 'Hello there, how are you?' }),
    })
    assert.equal(response.status, 200)
    let text = ''
    let firstToken = 0
    const decoder = new TextDecoder()
    for await (const chunk of response.body ?? []) {
      text += decoder.decode(chunk as Uint8Array, { stream: true })
      if (!firstToken && text.includes('"type":"token"')) firstToken = performance.now() - started
    }
    const total = performance.now() - started
    assert.match(text, /"type":"done"/)
    const tokens = (text.match(/"type":"token"/g) ?? []).length
    assert.ok(tokens >= 4, `tokens: ${tokens}`)
    // 150 ms between tokens: a buffered proxy would hand everything over at the end.
    assert.ok(total - firstToken >= (tokens - 2) * 150 * 0.8, `first token after ${Math.round(firstToken)} ms of ${Math.round(total)} ms`)

    // A WebSocket chat through the proxy.
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws?session_id=through-nginx`)
    const frames: Array<{ type: string }> = []
    const done = new Promise<void>((resolve, reject) => {
      socket.addEventListener('message', (event) => {
        const frame = JSON.parse(String(event.data)) as { type: string }
        frames.push(frame)
        if (frame.type === 'done') resolve()
        if (frame.type === 'error') reject(new Error(String(event.data)))
      })
      socket.addEventListener('error', () => reject(new Error('the WebSocket failed')))
    })
    await new Promise((resolve) => socket.addEventListener('open', resolve))
    socket.send(JSON.stringify({ type: 'chat', userText: 'Hi!' }))
    await done
    socket.close()
    assert.ok(frames.filter((frame) => frame.type === 'token').length >= 1)
  })
})
