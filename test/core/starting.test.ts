import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { type AppDeps, buildApp, holdPortWhileStarting, migrateServices } from '../../src/app.ts'
import { createManualClock } from '../../src/core/clock.ts'
import { createFakeTtsProvider } from '../../src/services/avatar/providers/tts/tts.fake.ts'
import type { Database } from '../../src/core/db/create-db.ts'
import { fallsUnder } from '../../src/core/errors/error-owners.ts'
import { listenUntilSignalled } from '../../src/core/http/graceful.ts'
import { createLifecycle } from '../../src/core/http/lifecycle.ts'
import { createIdGenerator } from '../../src/core/ids.ts'
import { createSecrets } from '../../src/core/security/keyring.ts'
import { serviceLoaders } from '../../src/services/index.ts'
import { buildTestApp, createTestDatabase, createTestSchemaUrl, secretStoreOf, testConfig, testDatabaseUrl, testDialect } from '../helpers/build-app.ts'
import { freePort } from '../helpers/free-port.ts'
import { startFaultProxy } from '../helpers/fault-proxy.ts'

/** Opens TCP connections to `port` one after another until stopped; counts the refused ones. */
function pollConnections(port: number, everyMs: number) {
  let running = true
  let opened = 0
  let refused = 0
  const done = (async () => {
    while (running) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1')
        socket.once('connect', () => {
          opened++
          socket.destroy()
          resolve()
        })
        socket.once('error', () => {
          refused++
          resolve()
        })
      })
      await sleep(everyMs)
    }
  })()
  return {
    stop: async () => {
      running = false
      await done
      return { opened, refused }
    },
  }
}

/**
 * `triad serve`'s start in-process: the port held on `port`, then the app built behind it on
 * `database` with `migrate` (tests hold or fail it); the app is not yet handed the socket.
 */
async function startBehindHolder(database: Database, port: number, config: ReturnType<typeof testConfig>, migrate: AppDeps['migrate']) {
  const clock = createManualClock()
  const holder = await holdPortWhileStarting(config, { port, host: '127.0.0.1' }, { logStream: devNull })
  const lifecycle = createLifecycle()
  const building = buildApp(config, {
    database,
    clock,
    lifecycle,
    holder,
    ids: createIdGenerator(clock),
    secrets: createSecrets(secretStoreOf(database), clock),
    logStream: devNull,
    migrate,
  })
  return { holder, lifecycle, building }
}

/** A build of all three services on `database` whose migrations wait for `release()`. */
function heldStart(database: Database, port: number) {
  let release = () => {}
  let started = () => {}
  const migrating = new Promise<void>((resolve) => (started = resolve))
  const held = new Promise<void>((resolve) => (release = resolve))
  return {
    migrating,
    release: () => release(),
    start: () =>
      startBehindHolder(database, port, testConfig({}), async (db, names) => {
        started()
        await held
        await migrateServices(db, names)
      }),
  }
}

const devNull = { write: () => true } as unknown as NodeJS.WritableStream

describe('starting', () => {
  it('answers every path while migrations run: /healthz 200, /readyz 503 naming them, each service in its own body with Retry-After', async (t) => {
    const database = await createTestDatabase(t)
    const port = await freePort()
    const start = heldStart(database, port)
    const { building, holder } = await start.start()
    t.after(() => holder.close())
    await start.migrating
    const base = `http://127.0.0.1:${port}`

    assert.equal((await fetch(`${base}/healthz`)).status, 200)
    const ready = await fetch(`${base}/readyz`)
    assert.equal(ready.status, 503)
    assert.deepEqual(((await ready.json()) as { error: { details: unknown } }).error.details, [{ check: 'migrations', state: 'running' }])

    const answers = {
      authn: await fetch(`${base}/server/api/authn/status`),
      avatarChat: await fetch(`${base}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"userText":"hi"}' }),
      avatarHealth: await fetch(`${base}/health`),
      payments: await fetch(`${base}/transactions/abc/captures`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1}' }),
      nobody: await fetch(`${base}/nowhere`),
    }
    for (const [name, answer] of Object.entries(answers)) {
      assert.equal(answer.status, 503, name)
      assert.ok(Number(answer.headers.get('retry-after')) >= 1, `${name}: Retry-After`)
      assert.equal(answer.headers.get('connection'), 'close', `${name}: a kept-alive client would stay on the holder`)
    }
    const authn = (await answers.authn.json()) as Record<string, unknown>
    assert.equal(authn.status, 503)
    assert.equal(authn.error, 'Service Unavailable')
    assert.equal(authn.path, '/server/api/authn/status')
    assert.match(((await answers.avatarChat.json()) as { detail: string }).detail, /starting/)
    assert.deepEqual(Object.keys((await answers.avatarHealth.json()) as object), ['detail'])
    assert.equal(((await answers.payments.json()) as { code: string }).code, 'service_unavailable')
    assert.equal(((await answers.nobody.json()) as { error: { code: string } }).error.code, 'service_unavailable')

    start.release()
    const app = await building
    t.after(() => app.close())
  })

  it('hands its listening socket to the app: no connection is refused between the first answer and the app serving', async (t) => {
    const database = await createTestDatabase(t)
    const port = await freePort()
    const start = heldStart(database, port)
    const { holder, lifecycle, building } = await start.start()
    await start.migrating
    const poll = pollConnections(port, 1)
    await sleep(50)
    start.release()
    const app = await building
    t.after(() => app.close())
    await listenUntilSignalled(app, lifecycle, { holder, timeoutMs: 10_000 })
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
    assert.equal(ready.status, 200)
    await sleep(50)
    const { opened, refused } = await poll.stop()
    assert.equal(refused, 0, `${refused} of ${opened + refused} connections refused during the hand-over`)
    assert.ok(opened > 10, `the poll ran through the hand-over (${opened} connections)`)
  })

  it('waits for a database it cannot reach, saying so in /readyz, and serves once it answers', async (t) => {
    const database = await createTestDatabase(t)
    const port = await freePort()
    let reachable = false
    let attempts = 0
    const { holder, building } = await startBehindHolder(database, port, testConfig({ TRIAD_SERVICES: 'avatar' }), async (db, names) => {
      attempts++
      if (!reachable) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
      await migrateServices(db, names)
    })
    const base = `http://127.0.0.1:${port}`
    while (attempts < 3) await sleep(20)
    const ready = await fetch(`${base}/readyz`)
    assert.equal(ready.status, 503)
    // Served alone, the avatar owns every path: its `{detail}` body.
    assert.match(((await ready.json()) as { detail: string }).detail, /database unreachable/)
    const chat = await fetch(`${base}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"userText":"hi"}' })
    assert.equal(chat.status, 503)
    assert.match(((await chat.json()) as { detail: string }).detail, /waiting for its database/)
    reachable = true
    const app = await building
    t.after(() => app.close())
    await holder.handOver(app)
    assert.equal((await fetch(`${base}/readyz`)).status, 200)
  })

  it('takes the port only once the speech engines are warm: /readyz 503 "services starting" meanwhile', async (t) => {
    const database = await createTestDatabase(t)
    const port = await freePort()
    let warm = () => {}
    const warming = new Promise<void>((resolve) => (warm = resolve))
    const tts = { ...createFakeTtsProvider(), ready: () => warming }
    const clock = createManualClock()
    const config = testConfig({ TRIAD_SERVICES: 'avatar' })
    const holder = await holdPortWhileStarting(config, { port, host: '127.0.0.1' }, { logStream: devNull })
    const app = await buildApp(config, { database, clock, holder, services: { avatar: { tts } }, secrets: createSecrets(secretStoreOf(database), clock), logStream: devNull })
    t.after(() => app.close())
    const handedOver = holder.handOver(app)
    const base = `http://127.0.0.1:${port}`
    const ready = await fetch(`${base}/readyz`)
    assert.equal(ready.status, 503)
    assert.match(((await ready.json()) as { detail: string }).detail, /services starting/)
    const speech = await fetch(`${base}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' })
    assert.equal(speech.status, 503)
    assert.match(((await speech.json()) as { detail: string }).detail, /starting its services/)
    warm()
    await handedOver
    assert.equal((await fetch(`${base}/readyz`)).status, 200)
    assert.equal((await fetch(`${base}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' })).status, 200)
  })

  it('ends the start on an error that waiting cannot mend, and lets go of the port', async (t) => {
    const database = await createTestDatabase(t)
    const port = await freePort()
    const { holder, building: failing } = await startBehindHolder(database, port, testConfig({ TRIAD_SERVICES: 'payments' }), async () => {
      throw new Error('migration 202611220040 failed: syntax error')
    })
    await assert.rejects(failing, /syntax error/)
    await holder.close()
    const refused = await new Promise<boolean>((resolve) => connect(port, '127.0.0.1').once('connect', () => resolve(false)).once('error', () => resolve(true)))
    assert.ok(refused)
  })

  it("names every route's path among its service's prefixes, so a starting instance answers it in that service's body", async (t) => {
    for (const name of ['authn', 'avatar', 'payments'] as const) {
      const service = await serviceLoaders[name]()
      const { app } = await buildTestApp(t, { services: [name] })
      await app.ready()
      const paths = Object.keys((app.swagger() as { paths: Record<string, unknown> }).paths)
      for (const path of paths) {
        if (['/healthz', '/readyz'].includes(path)) continue
        assert.ok(
          service.paths.some((prefix) => fallsUnder(path, prefix)),
          `${name}: ${path} is under none of ${service.paths.join(', ')}`,
        )
      }
    }
  })
})

describe('two `triad serve` processes starting together on a fresh PostgreSQL schema', { skip: testDialect !== 'postgres' && 'needs PostgreSQL (npm run test:pg)' }, () => {
  it('never refuse a connection from their first answer on, and answer 503 in each service body until ready', { timeout: 180_000 }, async (t) => {
    const schemaUrl = new URL(await createTestSchemaUrl(t))
    // PostgreSQL through a proxy that is down at first: both wait for it, holding their ports.
    const target = new URL(testDatabaseUrl)
    const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) })
    t.after(() => proxy.close())
    await proxy.down()
    const url = schemaUrl
    url.host = proxy.address
    const secrets = join(mkdtempSync(join(tmpdir(), 'triad-start-')), 'secrets.json')
    const ports = [await freePort(), await freePort()]
    const children = ports.map((port) =>
      spawn(process.execPath, [new URL('../../bin/triad.js', import.meta.url).pathname, 'serve', '--port', String(port)], {
        env: { ...process.env, DATABASE_URL: url.toString(), TRIAD_SECRETS_FILE: secrets, LOG_LEVEL: 'warn', AVATAR_TTS_WARM: 'false' },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    )
    t.after(() => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL')))

    const unreachableSeen = ports.map(() => Promise.withResolvers<void>())
    const watch = async (port: number, index: number) => {
      const base = `http://127.0.0.1:${port}`
      let firstAnswer: number | undefined
      let refusedAfter = 0
      let sawUnreachable = false
      let sawAvatarBody = false
      const deadline = performance.now() + 150_000
      for (;;) {
        assert.ok(performance.now() < deadline, `${base} never became ready`)
        try {
          const ready = await fetch(`${base}/readyz`)
          firstAnswer ??= performance.now()
          if (ready.ok) break
          const text = await ready.text()
          if (text.includes('database unreachable')) {
            sawUnreachable = true
            unreachableSeen[index]?.resolve()
          }
          const avatar = await fetch(`${base}/v1/tts/voices`)
          if (avatar.status === 503 && 'detail' in ((await avatar.json()) as object)) sawAvatarBody = true
        } catch {
          if (firstAnswer !== undefined) refusedAfter++
        }
        await sleep(20)
      }
      return { refusedAfter, sawUnreachable, sawAvatarBody }
    }
    const watching = ports.map(watch)
    // Both wait on the database, holding their ports; then it comes.
    await Promise.all(unreachableSeen.map((seen) => seen.promise))
    await proxy.up()
    const results = await Promise.all(watching)
    for (const [index, result] of results.entries()) {
      assert.equal(result.refusedAfter, 0, `instance ${index}: connections refused after its first answer`)
      assert.ok(result.sawUnreachable, `instance ${index}: /readyz named the unreachable database`)
      assert.ok(result.sawAvatarBody, `instance ${index}: the avatar's 503 was {detail}`)
    }
  })
})
