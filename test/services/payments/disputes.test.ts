import assert from 'node:assert/strict'
import { test } from 'node:test'
import { authorize, basic, createApp, merchantFixture, parseList, paymentsCli } from './helpers.ts'

type Fixture = Awaited<ReturnType<typeof merchantFixture>>

const cli = (fixture: Fixture, ...argv: string[]) => paymentsCli(fixture, ...argv)

test('a dispute opened by the CLI shows on the transaction and in the lists; lost, it debits amount plus fee with a line', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1000 })
  await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 100 })

  const tooMuch = await cli(fixture, 'dispute', 'open', id, '--amount', '901')
  assert.equal(tooMuch.code, 1)
  assert.match(tooMuch.err, /Can dispute at most EUR 9\.00/)

  const opened = await cli(fixture, 'dispute', 'open', id, '--amount', '600', '--reason', '4')
  assert.equal(opened.code, 0, opened.err)
  const disputeId = opened.out.trim()
  assert.match(disputeId, /^[0-9a-f]{24}$/)

  const transaction = (await fixture.call('GET', `/transactions/${id}`)).json().transaction
  assert.equal(transaction.disputedAmount, 600)
  assert.deepEqual(transaction.trail[2], {
    dispute: { id: disputeId },
    created: '2026-01-01T00:00:00.000Z',
    amount: 600,
    balance: 0,
    fee: { flat: 0, rate: 0 },
  })

  const dispute = (await fixture.call('GET', `/disputes/${disputeId}`)).json().dispute
  assert.deepEqual(dispute, {
    id: disputeId,
    merchantId: fixture.merchant.id,
    transactionId: id,
    created: '2026-01-01T00:00:00.000Z',
    amount: 600,
    reason: { code: 4, title: 'Goods or services not received' },
    due: '2026-01-11T00:00:00.000Z',
  })
  assert.deepEqual(parseList(await fixture.call('GET', `/disputes?filter[merchantId]=${fixture.merchant.id}&limit=10`)), [dispute])
  assert.deepEqual(parseList(await fixture.call('GET', `/disputes?filter[merchantId]=${fixture.merchant.id}&filter[transactionId]=${id}&limit=10`)), [dispute])
  assert.equal((await fixture.call('GET', `/disputes?filter[merchantId]=${fixture.merchant.id}&filter[transactionId]=other&limit=10`)).body, '[\n]')
  const unfiltered = await fixture.call('GET', '/disputes?limit=10')
  assert.equal(unfiltered.statusCode, 400)
  assert.deepEqual(unfiltered.json(), [{ field: 'filter[merchantId]', message: 'is required' }])
  assert.equal((await fixture.call('GET', `/disputes?filter[merchantId]=${fixture.merchant.id}`)).statusCode, 400, 'limit required')

  const balanceBefore = (await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant.balance
  const lost = await cli(fixture, 'dispute', 'decide', disputeId, '--lost', '--json')
  assert.equal(lost.code, 0, lost.err)
  assert.equal(JSON.parse(lost.out).lost, true)
  const merchant = (await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant
  assert.equal(merchant.balance, balanceBefore - 600 - 1500)
  const after = (await fixture.call('GET', `/transactions/${id}`)).json().transaction
  const entry = after.trail[3]
  assert.deepEqual(entry.dispute, { id: disputeId, lost: true })
  assert.equal(entry.balance, -2100)
  const [line] = parseList<Record<string, unknown>>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=1`))
  assert.equal(line.id, entry.lineId)
  assert.equal(line.dispute, true)
  assert.equal(line.fee, 1500)
  assert.equal(line.balance, -2100)
  const lines = parseList<{ balance: number }>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=10`))
  assert.equal(
    lines.reduce((sum, item) => sum + item.balance, 0),
    merchant.balance,
  )
  // What was lost can no longer be refunded: captured 1000 − refunded 100 − lost 600 = 300.
  const refund = await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 301 })
  assert.deepEqual(refund.json(), [{ field: 'amount', message: 'Can refund at most EUR 3.00' }])

  const again = await cli(fixture, 'dispute', 'decide', disputeId, '--won')
  assert.equal(again.code, 1)
  assert.match(again.err, /already decided/)
})

test('a won dispute leaves the balance alone; CLI misuse is reported', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 500 })
  assert.equal((await cli(fixture, 'dispute', 'open', id)).code, 1, 'nothing captured yet')
  await fixture.call('POST', `/transactions/${id}/captures`, { amount: 500 })
  const opened = await cli(fixture, 'dispute', 'open', id, '--json')
  assert.equal(opened.code, 0, opened.err)
  const dispute = JSON.parse(opened.out)
  assert.equal(dispute.amount, 500)
  assert.equal(dispute.reason.code, 1)
  const balance = (await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant.balance
  const won = await cli(fixture, 'dispute', 'decide', dispute.id, '--won')
  assert.equal(won.code, 0)
  assert.equal((await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant.balance, balance)
  const trail = (await fixture.call('GET', `/transactions/${id}`)).json().transaction.trail
  assert.deepEqual(trail.at(-1).dispute, { id: dispute.id, won: true })
  assert.equal(trail.at(-1).lineId, undefined)

  assert.equal((await cli(fixture, 'dispute', 'decide', dispute.id)).code, 2)
  assert.equal((await cli(fixture, 'dispute', 'decide', dispute.id, '--won', '--lost')).code, 2)
  assert.equal((await cli(fixture, 'dispute', 'open', id, '--amount', 'ten')).code, 2)
  assert.equal((await cli(fixture, 'dispute', 'open', 'nope')).code, 1)
  assert.equal((await cli(fixture, 'dispute', 'open', id, '--reason', '99')).code, 1)
  assert.equal((await cli(fixture, 'dispute', 'decide', 'nope', '--won')).code, 1)
})

test('fraud alerts reported by the CLI are listed and fetched; other apps are refused', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  fixture.clock.advance(60_000)
  const reported = await cli(fixture, 'fraud', 'report', id, '--reason', '6')
  assert.equal(reported.code, 0, reported.err)
  const fraudId = reported.out.trim()
  const fraud = (await fixture.call('GET', `/frauds/${fraudId}`)).json().fraud
  assert.deepEqual(fraud, {
    id: fraudId,
    merchantId: fixture.merchant.id,
    transactionId: id,
    created: '2026-01-01T00:01:00.000Z',
    reported: '2026-01-01T00:01:00.000Z',
    reason: 6,
  })
  const plain = await cli(fixture, 'fraud', 'report', id, '--json')
  assert.equal(JSON.parse(plain.out).reason, undefined)
  const list = parseList(await fixture.call('GET', `/frauds?filter[merchantId]=${fixture.merchant.id}&filter[transactionId]=${id}&limit=10`))
  assert.equal(list.length, 2)
  assert.equal((await cli(fixture, 'fraud', 'report', id, '--reason', '9')).code, 1)
  assert.equal((await fixture.call('GET', '/frauds?limit=10')).statusCode, 400)
  assert.equal((await fixture.call('GET', '/frauds/nope')).statusCode, 404)
  assert.equal((await fixture.call('GET', '/disputes/nope')).statusCode, 404)

  const stranger = await createApp(fixture.app)
  const headers = { authorization: basic(stranger.key) }
  assert.equal((await fixture.app.inject({ url: `/frauds/${fraudId}`, headers })).statusCode, 403)
  assert.equal((await fixture.app.inject({ url: `/frauds?filter[merchantId]=${fixture.merchant.id}&limit=5`, headers })).statusCode, 403)
  assert.equal((await fixture.app.inject({ url: '/frauds?filter[merchantId]=nope&limit=5', headers })).statusCode, 404)
})

test('a lost dispute in a foreign currency debits what a refund of the same amount would, plus the fee; a second dispute covers only the rest', async (t) => {
  const fixture = await merchantFixture(t)
  const refunded = await authorize(fixture, fixture.merchant.id, { amount: 1000, currency: 'USD' })
  const disputed = await authorize(fixture, fixture.merchant.id, { amount: 1000, currency: 'USD' })
  await fixture.call('POST', `/transactions/${refunded}/captures`, { amount: 1000 })
  await fixture.call('POST', `/transactions/${disputed}/captures`, { amount: 1000 })
  const refund = (await fixture.call('POST', `/transactions/${refunded}/refunds`, { amount: 333 })).json().transaction.trail.at(-1)

  const first = await cli(fixture, 'dispute', 'open', disputed, '--amount', '333', '--json')
  assert.equal(first.code, 0, first.err)
  const rest = await cli(fixture, 'dispute', 'open', disputed, '--json')
  assert.equal(rest.code, 0, rest.err)
  assert.equal(JSON.parse(rest.out).amount, 667, 'the second dispute defaults to what the first left')
  const none = await cli(fixture, 'dispute', 'open', disputed)
  assert.equal(none.code, 1)
  assert.match(none.err, /Nothing of this transaction is captured and undisputed/)

  const lost = await cli(fixture, 'dispute', 'decide', JSON.parse(first.out).id, '--lost')
  assert.equal(lost.code, 0, lost.err)
  const transaction = (await fixture.call('GET', `/transactions/${disputed}`)).json().transaction
  assert.equal(transaction.disputedAmount, 1000)
  const entry = transaction.trail.at(-1)
  assert.deepEqual(entry.dispute, { id: JSON.parse(first.out).id, lost: true })
  assert.equal(entry.amount, 333)
  assert.equal(entry.balance, refund.balance - 1500)
  assert.deepEqual(entry.fee, { flat: 1500, rate: 0 })
  const line = (await fixture.call('GET', `/lines/${entry.lineId}`)).json().line
  assert.deepEqual(
    { balance: line.balance, fee: line.fee, amount: line.amount, transactionId: line.transactionId, dispute: line.dispute },
    { balance: refund.balance - 1500, fee: 1500, amount: { currency: 'USD', amount: 333 }, transactionId: disputed, dispute: true },
  )
  assert.equal(line.description, `Dispute ${JSON.parse(first.out).id} lost`)

  const unknown = await cli(fixture, 'dispute', 'open', 'nope')
  assert.match(unknown.err, /Transaction not found/)
  const unknownFraud = await cli(fixture, 'fraud', 'report', 'nope')
  assert.equal(unknownFraud.code, 1)
  assert.match(unknownFraud.err, /Transaction not found/)
  const unknownDispute = await cli(fixture, 'dispute', 'decide', 'nope', '--lost')
  assert.match(unknownDispute.err, /Dispute not found/)
})
