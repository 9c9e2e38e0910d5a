import assert from 'node:assert/strict'
import { randomBytes, randomInt } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createTestSchemaUrl, testDialect } from '../helpers/build-app.ts'
import {
  authenticatedAt,
  authorizeOverHttp,
  captureOverHttp,
  loginOverHttp,
  logoutOverHttp,
  transactionOverHttp,
  userMessagesAt,
} from '../helpers/http-clients.ts'
import { startTriadProcess, type TriadProcess } from '../helpers/triad-process.ts'
import { listenToEvents } from '../services/avatar/helpers.ts'

// Two real `triad serve` processes, as docs/deployment.md deploys them: one PostgreSQL database
// (a schema of its own here), one Redis, one secrets file, both started at the same moment (so
// they race for the migrations). The other suites show the same guarantees with two apps in one
// process; this one shows them across processes and sockets.

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const ADMIN = { email: 'ops@example.org', password: 'correct horse battery' }
const OPERATOR_KEY = 'operator-key-for-two-instances'
const skip = testDialect !== 'postgres' && 'two instances need PostgreSQL: set TEST_DATABASE_URL=postgres://… (npm run test:pg runs it)'

/** A fresh address per client, passed on by the trusted proxy (127.0.0.1), as nginx does in deploy/. */
const clientAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

test('two Triad processes over one PostgreSQL and Redis behave as one', { skip, timeout: 480_000 }, async (t) => {
  const url = new URL(await createTestSchemaUrl(t))
  const shared = {
    DATABASE_URL: url.toString(),
    REDIS_URL,
    TRIAD_SECRETS_FILE: join(mkdtempSync(join(tmpdir(), 'triad-shared-')), 'secrets.json'),
    TRUST_PROXY: '127.0.0.1',
    AUTHN_ADMIN_EMAIL: ADMIN.email,
    AUTHN_ADMIN_PASSWORD: ADMIN.password,
    AUTHN_REVOCATION_CACHE: '0s',
    AVATAR_MOCK_TOKEN_DELAY: '0s',
    AVATAR_RATE_LIMIT: '3/min',
    AVATAR_OPERATOR_KEY: OPERATOR_KEY,
    LOG_LEVEL: 'warn',
  }
  const [a, b] = (await Promise.all([startTriadProcess(t, shared), startTriadProcess(t, shared)])) as [TriadProcess, TriadProcess]
  assert.notEqual(a.base, b.base)

  await t.test('authn: a login on one instance is logged out everywhere from the other', async () => {
    const laptop = await loginOverHttp(a.base, ADMIN.email, ADMIN.password)
    const phone = await loginOverHttp(b.base, ADMIN.email, ADMIN.password)
    for (const base of [a.base, b.base]) for (const login of [laptop, phone]) assert.equal(await authenticatedAt(base, login.token), true)
    // The session made on A is ended through B.
    assert.equal(await logoutOverHttp(b.base, laptop), 204)
    for (const base of [a.base, b.base]) for (const login of [laptop, phone]) assert.equal(await authenticatedAt(base, login.token), false, `${base} after the logout`)
  })

  await t.test('avatar: a chat session continues across instances', async () => {
    const session = `ses-${randomBytes(4).toString('hex')}`
    const turns = ['first, on A', 'second, on B', 'third, on A again']
    for (const [index, text] of turns.entries()) {
      const reply = await fetch(`${[a, b][index % 2]?.base}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
        body: JSON.stringify({ sessionId: session, userText: text }),
      })
      assert.equal(reply.status, 200, await reply.text())
    }
    assert.deepEqual(await userMessagesAt(b.base, session), turns)
    assert.deepEqual(await userMessagesAt(a.base, session), turns)
    assert.equal((await fetch(`${a.base}/v1/session/${session}`, { method: 'DELETE' })).status, 200)
    assert.equal(await userMessagesAt(b.base, session), undefined, 'deleted on A, gone on B')
  })

  await t.test('avatar: what an operator says on A reaches a page listening on B', async () => {
    const session = `ops-${randomBytes(4).toString('hex')}`
    const page = await listenToEvents(b.base, session)
    try {
      const said = await fetch(`${a.base}/v1/session/${session}/say`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${OPERATOR_KEY}`, 'x-forwarded-for': clientAddress() },
        body: JSON.stringify({ text: 'Heard on B.', emotion: 'happy' }),
      })
      assert.equal(said.status, 200, await said.clone().text())
      assert.deepEqual(await page.next(), ((await said.json()) as { event: unknown }).event)
    } finally {
      page.close()
    }
  })

  await t.test('payments: thirty concurrent captures of one authorization over both never capture more than it', async () => {
    const { appKey, transactionId } = await authorizeOverHttp(a.base, 300)
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, index) => captureOverHttp([a, b][index % 2]?.base ?? '', appKey, transactionId, 15)))
    const accepted = statuses.filter((status) => status === 201).length
    assert.ok(
      statuses.every((status) => status === 201 || status === 400 || status === 409),
      statuses.join(','),
    )
    const seenFromB = await transactionOverHttp(b.base, appKey, transactionId)
    const seenFromA = await transactionOverHttp(a.base, appKey, transactionId)
    assert.ok(seenFromB.capturedAmount <= 300, `captured ${seenFromB.capturedAmount} of 300`)
    assert.equal(seenFromB.capturedAmount, accepted * 15, 'every accepted capture counted, no other')
    assert.equal(seenFromB.trail.length, accepted)
    assert.deepEqual(seenFromA, seenFromB)
    // Thirty tries at 15 on 300: twenty fit, and with retries on conflict all twenty get in.
    assert.ok(accepted >= 1 && accepted <= 20, `accepted ${accepted}`)
  })

  await t.test('rate limits are one budget across instances (Redis)', async () => {
    const client = clientAddress()
    const post = (instance: TriadProcess) =>
      fetch(`${instance.base}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
        body: JSON.stringify({ userText: 'hi' }),
      })
    const answers: number[] = []
    for (const instance of [a, b, a, b, a]) {
      const response = await post(instance)
      await response.arrayBuffer()
      answers.push(response.status)
    }
    // AVATAR_RATE_LIMIT=3/min per client: three in all, not three per instance.
    assert.deepEqual(answers, [200, 200, 200, 429, 429])
  })

})
