import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { readEnvironment } from '../../src/core/config/load-config.ts'
import { parseRedisUrl } from '../../src/core/config/redis-url.ts'

const triad = new URL('../../bin/triad.js', import.meta.url).pathname

describe('configuration', () => {
  it('applies the documented defaults when nothing is set', () => {
    const config = loadConfig({})
    assert.equal(config.core.port, 8080)
    assert.equal(config.core.host, '127.0.0.1')
    assert.equal(config.core.databaseUrl, 'sqlite:./data/triad.sqlite')
    assert.deepEqual(config.core.services, ['authn', 'avatar', 'payments'])
    assert.equal(config.core.shutdownTimeoutMs, 10_000)
  })

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ PORT: '' }).core.port, 8080)
  })

  it('coerces numbers and parses lists', () => {
    const config = loadConfig({ PORT: '9000', TRIAD_SERVICES: 'payments, authn', CORS_ORIGINS: 'https://a.example, https://b.example' })
    assert.equal(config.core.port, 9000)
    assert.deepEqual(config.core.services, ['payments', 'authn'])
    assert.deepEqual(config.core.corsOrigins, ['https://a.example', 'https://b.example'])
  })

  it('names every bad variable and what it expects, in one message', () => {
    assert.throws(
      () => loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', TRIAD_SERVICES: 'authn,billing' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.equal(error.problems.length, 3)
        assert.match(error.message, /PORT must be an integer port between 0 and 65535 \(got "abc"\)/)
        assert.match(error.message, /DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres:\/\/.* \(got "mysql:\/\/x"\)/)
        assert.match(error.message, /TRIAD_SERVICES must be a comma-separated list of authn, avatar, payments/)
        assert.doesNotMatch(error.message, /\n/)
        return true
      },
    )
  })

  it('rejects a port out of range and a malformed duration', () => {
    assert.throws(() => loadConfig({ PORT: '70000' }), /PORT must be/)
    assert.throws(() => loadConfig({ SHUTDOWN_TIMEOUT: 'soon' }), /SHUTDOWN_TIMEOUT must be a duration/)
  })

  it('takes a standby only beside a PostgreSQL primary, and a wait of 1 s at most', () => {
    const primary = 'postgres://triad@db-primary/triad'
    assert.equal(loadConfig({ DATABASE_URL: primary }).core.standby, undefined)
    assert.deepEqual(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://triad@db-standby/triad' }).core.standby, {
      url: 'postgres://triad@db-standby/triad',
      maxWaitMs: 50,
    })
    assert.equal(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://s/triad', DATABASE_READ_MAX_WAIT: '0ms' }).core.standby?.maxWaitMs, 0)
    assert.throws(() => loadConfig({ DATABASE_READ_URL: 'postgres://s/triad' }), /DATABASE_READ_URL names a PostgreSQL standby .* DATABASE_URL must be postgres:\/\/… too \(it is SQLite here\)/)
    assert.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'sqlite:./copy.sqlite' }), /DATABASE_READ_URL must be postgres:/)
    assert.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://s/triad', DATABASE_READ_MAX_WAIT: '2s' }), /DATABASE_READ_MAX_WAIT must be at most 1000ms/)
  })

  it('reads a .env file, with the real environment taking precedence', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'triad-env-')), '.env')
    writeFileSync(file, 'PORT=9100\nLOG_LEVEL=debug\n')
    const config = loadConfig(readEnvironment({ LOG_LEVEL: 'warn' }, file))
    assert.equal(config.core.port, 9100)
    assert.equal(config.core.logLevel, 'warn')
  })

  it('takes REDIS_URL as one server or as sentinels and a master name', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).core.redisUrl, 'redis://127.0.0.1:6379')
    const sentinels = 'redis+sentinel://:s%40cret@10.0.0.1:26379,10.0.0.2:26380,[::1]/triad?sentinelPassword=other'
    assert.equal(loadConfig({ REDIS_URL: sentinels }).core.redisUrl, sentinels)
    assert.deepEqual(parseRedisUrl(sentinels), {
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26379 },
      ],
      masterName: 'triad',
      username: undefined,
      password: 's@cret',
      sentinelPassword: 'other',
    })
  })

  it('refuses a sentinel URL it cannot follow, saying what is wrong without repeating the password', () => {
    for (const [url, reason] of [
      ['redis+sentinel://:pw@10.0.0.1:26379', /the master name is missing after the sentinels/],
      ['redis+sentinel://:pw@/triad', /no sentinel is named/],
      ['redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:port/triad', /"10\.0\.0\.2:port" is not a sentinel's host:port/],
      ['redis+sentinel://:pw@10.0.0.1:26379/triad?role=replica', /unknown parameter "role" \(the only one is sentinelPassword\)/],
    ] as const) {
      assert.throws(
        () => loadConfig({ REDIS_URL: url }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError)
          assert.match(error.message, /REDIS_URL must be redis\+sentinel:\/\/\[\[user\]:password@\]host:port\[,host:port…\]\/master-name/)
          assert.match(error.message, reason)
          assert.doesNotMatch(error.message, /pw/)
          return true
        },
      )
    }
    assert.throws(() => loadConfig({ REDIS_URL: 'sentinel://10.0.0.1/triad' }), /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(one server\), or redis\+sentinel:\/\//)
  })

  it('returns a frozen object', () => {
    const config = loadConfig({})
    assert.ok(Object.isFrozen(config))
    assert.ok(Object.isFrozen(config.core))
  })

  for (const [name, env, expected] of [
    ['PORT=abc', { PORT: 'abc' }, /^triad: Invalid configuration: PORT must be an integer port between 0 and 65535 \(got "abc"\)\n$/],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, /^triad: Invalid configuration: DATABASE_URL must be .*\(got "mysql:\/\/x"\)\n$/],
  ] as const) {
    it(`stops \`triad serve\` with ${name}: one line on stderr, exit code 1, no stack trace`, () => {
      const result = spawnSync(process.execPath, [triad, 'serve'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 })
      assert.equal(result.status, 1)
      assert.match(result.stderr, expected)
      assert.doesNotMatch(result.stderr, /at .*\.ts:\d+/)
      assert.equal(result.stdout, '')
    })
  }
})
