import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { sql } from 'kysely'
import { createDb } from '../../src/core/db/create-db.ts'
import { buildTestApp, testDialect } from '../helpers/build-app.ts'
import { errorShapes } from '../helpers/error-shapes.ts'
import { authorizeOverHttp } from '../helpers/http-clients.ts'

// Issue 25 §5: a SQLite database on a disk that fills up. A real one: a small tmpfs, filled with a
// file, then the file removed (mounting needs root; without it the test says so and skips).

/** A 6 MiB tmpfs in a fresh directory, or why there is none. */
function smallDisk(): { dir: string; unmount(): void } | string {
  if (testDialect !== 'sqlite') return 'a SQLite database file on a full disk (runs on the SQLite pass)'
  const dir = mkdtempSync(join(tmpdir(), 'triad-full-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return `mounting a small tmpfs is not permitted here (${String((error as Error).message).split('\n')[0]})`
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Writes zeros to `path` until the disk refuses more. */
function fill(path: string): void {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

const disk = smallDisk()
const json = { 'content-type': 'application/json' }
const basic = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`

describe('SQLite on a full disk', { skip: typeof disk === 'string' ? disk : false }, () => {
  // After the app and its database have closed (the test's own cleanups run first).
  after(() => {
    if (typeof disk !== 'string') disk.unmount()
  })
  it('answers writes 507 in the owner’s shape, keeps serving reads, stays intact and writes again once space returns', async (t) => {
    if (typeof disk === 'string') return
    const database = await createDb(`sqlite:${join(disk.dir, 'triad.db')}`)
    t.after(() => database.destroy())
    const { app } = await buildTestApp(t, { database, env: { AVATAR_MOCK_TOKEN_DELAY: '0s', AVATAR_RATE_LIMIT: '0', PAYMENTS_RATE_LIMIT: '0' } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    const { appKey, transactionId } = await authorizeOverHttp(base, 100_000)
    const capture = () => fetch(`${base}/transactions/${transactionId}/captures`, { method: 'POST', headers: { ...json, authorization: basic(appKey) }, body: '{"amount":10}' })
    const chat = (text: string) => fetch(`${base}/v1/chat`, { method: 'POST', headers: json, body: JSON.stringify({ sessionId: 'full', userText: text }) })
    assert.equal((await capture()).status, 201)
    assert.equal((await chat('before')).status, 200)

    const filler = join(disk.dir, 'filler')
    fill(filler)
    // Pages already allocated (the WAL's, free pages) may take a few writes before one needs more.
    const refused: Array<{ owner: 'payments' | 'avatar'; status: number; body: string }> = []
    let acknowledged = 1
    for (let attempt = 0; attempt < 50 && refused.length < 4; attempt++) {
      const captured = await capture()
      const capturedBody = await captured.text()
      if (captured.status === 201) acknowledged++
      else refused.push({ owner: 'payments', status: captured.status, body: capturedBody })
      const chatted = await chat(`full ${attempt} ${'words '.repeat(200)}`)
      const chattedBody = await chatted.text()
      if (chatted.status !== 200) refused.push({ owner: 'avatar', status: chatted.status, body: chattedBody })
    }
    assert.ok(refused.some((answer) => answer.owner === 'payments') && refused.some((answer) => answer.owner === 'avatar'), 'the full disk was felt by both services')
    for (const answer of refused) {
      assert.equal(answer.status, 507, answer.body)
      errorShapes[answer.owner](JSON.parse(answer.body), 507)
    }
    const read = await fetch(`${base}/transactions/${transactionId}`, { headers: { authorization: basic(appKey) } })
    assert.equal(read.status, 200, 'reads go on')
    const history = await fetch(`${base}/v1/session/full/history`)
    assert.equal(history.status, 200)

    rmSync(filler)
    assert.equal((await capture()).status, 201, 'writes resume once space returns')
    acknowledged++
    assert.equal((await chat('after')).status, 200)
    const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(database.db)
    assert.deepEqual(check.rows, [{ integrity_check: 'ok' }])
    const row = await database.db.selectFrom('payments_transactions').select('captured_amount').where('id', '=', transactionId).executeTakeFirstOrThrow()
    assert.equal(row.captured_amount, acknowledged * 10, 'exactly the acknowledged captures are stored')
  })
})
