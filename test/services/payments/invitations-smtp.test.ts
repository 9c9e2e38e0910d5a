import assert from 'node:assert/strict'
import { once } from 'node:events'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { test } from 'node:test'
import { merchantFixture } from './helpers.ts'

/** A minimal SMTP server (no TLS, no auth) that records each message it accepts. */
async function fakeSmtp(t: { after(fn: () => Promise<void> | void): void }) {
  const messages: Array<{ from: string; to: string[]; data: string }> = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    let buffer = ''
    let inData = false
    let current = { from: '', to: [] as string[], data: '' }
    socket.write('220 fake ESMTP\r\n')
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8')
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n')
          if (end < 0) return
          current.data = buffer.slice(0, end)
          buffer = buffer.slice(end + 5)
          inData = false
          messages.push(current)
          current = { from: '', to: [], data: '' }
          socket.write('250 queued\r\n')
          continue
        }
        const newline = buffer.indexOf('\r\n')
        if (newline < 0) return
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 2)
        const verb = line.slice(0, 4).toUpperCase()
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 fake\r\n')
        else if (verb === 'MAIL') {
          current.from = line
          socket.write('250 ok\r\n')
        } else if (verb === 'RCPT') {
          current.to.push(line)
          socket.write('250 ok\r\n')
        } else if (verb === 'DATA') {
          inData = true
          socket.write('354 go ahead\r\n')
        } else if (verb === 'QUIT') socket.end('221 bye\r\n')
        else socket.write('250 ok\r\n')
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return { url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`, messages }
}

test('with PAYMENTS_SMTP_URL, invitations really go out over SMTP (and not to the outbox)', async (t) => {
  const smtp = await fakeSmtp(t)
  const fixture = await merchantFixture(t, { env: { PAYMENTS_SMTP_URL: smtp.url, PAYMENTS_SMTP_FROM: 'Shop Admin <admin@shop.example>' } })
  const response = await fixture.call('POST', `/merchants/${fixture.merchant.id}/users`, { email: 'friend@example.com' })
  assert.equal(response.statusCode, 201)
  assert.deepEqual(response.json(), { isMember: false })
  assert.equal(smtp.messages.length, 1)
  const [message] = smtp.messages
  assert.match(message.from, /admin@shop\.example/)
  assert.match(message.to[0], /friend@example\.com/)
  assert.match(message.data, /Subject: You are invited to Coffee & John/)
  assert.match(message.data, new RegExp(fixture.merchant.id))
  assert.deepEqual(await fixture.db.selectFrom('payments_outbox').selectAll().execute(), [])
})

test('an SMTP server that cannot be reached does not fail the invitation; the e-mail is kept in the outbox', async (t) => {
  const fixture = await merchantFixture(t, { env: { PAYMENTS_SMTP_URL: 'smtp://127.0.0.1:1' } })
  const response = await fixture.call('POST', `/merchants/${fixture.merchant.id}/users`, { email: 'friend@example.com' })
  assert.equal(response.statusCode, 201)
  const users = await fixture.call('GET', `/merchants/${fixture.merchant.id}/users?limit=5`)
  assert.match(users.body, /friend@example\.com/)
  const kept = await fixture.db.selectFrom('payments_outbox').select(['recipient', 'subject']).execute()
  assert.deepEqual(kept, [{ recipient: 'friend@example.com', subject: 'You are invited to Coffee & John on Triad Payments' }])
})
