import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Kysely } from 'kysely'
import { systemClock } from '../../../../src/core/clock.ts'
import { createDb } from '../../../../src/core/db/create-db.ts'
import { createIdGenerator } from '../../../../src/core/ids.ts'
import { cardExpiry, recordTransaction } from '../../../../src/services/payments/modules/transactions/index.ts'
import { createEventRecorder } from '../../../../src/services/payments/modules/webhooks/index.ts'
import type { PaymentsTables } from '../../../../src/services/payments/tables.ts'
import { ownSqliteFiles, startTriadProcess } from '../../../helpers/triad-process.ts'
import { basic } from '../helpers.ts'
import { startReceiver } from './receiver.ts'

// Real processes on one SQLite file: the first is killed (SIGKILL) while it sends an event; the
// outbox row and its delivery survive, and a new process sends the event once the lease is over.
// Two process starts: on a machine busy with the rest of the suite each can take a minute.
test('nothing is lost when the sending process is killed: a new process sends the event, same id', { timeout: 300_000, skip: ownSqliteFiles }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'triad-webhooks-'))
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'triad.sqlite')}`,
    TRIAD_SECRETS_FILE: join(dir, 'secrets.json'),
    TRIAD_SERVICES: 'payments',
    PAYMENTS_WEBHOOK_TIMEOUT: '1s',
    PAYMENTS_WEBHOOK_POLL: '200ms',
    LOG_LEVEL: 'warn',
  }
  const receiver = await startReceiver(t)
  receiver.answer('hang')
  const first = await startTriadProcess(t, env)
  const post = async (base: string, path: string, key: string | undefined, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: basic(key) } : {}) },
      body: JSON.stringify(body),
    })
    assert.equal(response.status, 201, await response.clone().text())
    return (await response.json()) as Record<string, { id: string; key: string; test: boolean; descriptor: string }>
  }
  const { app } = await post(first.base, '/apps', undefined, { name: 'shop' })
  const { merchant } = await post(first.base, '/merchants', app.key, {
    currency: 'EUR',
    email: 'a@shop.example',
    website: 'https://shop.example',
    descriptor: 'SHOP',
    company: { country: 'DK' },
    test: true,
  })
  await post(first.base, `/merchants/${merchant.id}/webhooks`, app.key, { url: receiver.url, events: ['*'] })

  // An authorization committed (with its event) on the same file, as the customer side does.
  const database = await createDb(env.DATABASE_URL)
  t.after(() => database.destroy())
  const db = database.db as Kysely<PaymentsTables>
  const ids = createIdGenerator(systemClock)
  const transaction = await recordTransaction(
    { db, database, ids, clock: systemClock, events: createEventRecorder({ ids, clock: systemClock, dialect: database.dialect }) },
    {
      merchant: { id: merchant.id, test: 1, descriptor: 'SHOP' },
      amount: 1000,
      currency: 'EUR',
      card: { ref: null, bin: '410000', last4: '0000', expiry: cardExpiry(2030, 8), scheme: 'visa', codePresent: true },
      recurring: false,
    },
  )

  await receiver.waitFor(1)
  first.child.kill('SIGKILL')
  await new Promise((resolve) => first.child.once('exit', resolve))
  const stranded = await db.selectFrom('payments_event_deliveries').select(['status', 'lease_until', 'attempts']).executeTakeFirstOrThrow()
  assert.equal(stranded.status, 'pending')
  assert.ok(stranded.lease_until !== null, 'the killed process held the lease')
  assert.equal(stranded.attempts, 0)

  const second = await startTriadProcess(t, env)
  assert.ok(second.base)
  await receiver.waitFor(2)
  assert.equal(receiver.received[1].event.id, receiver.received[0].event.id)
  assert.equal(receiver.received[1].event.type, 'transaction.authorized')
  assert.equal(receiver.received[1].event.data.id, transaction.id)
  for (let waited = 0; ; waited += 100) {
    const row = await db.selectFrom('payments_event_deliveries').select(['status', 'attempts']).executeTakeFirstOrThrow()
    if (row.status === 'delivered') {
      assert.equal(row.attempts, 1)
      break
    }
    assert.ok(waited < 10_000, `delivery still ${row.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.equal(receiver.received.length, 2)
})
