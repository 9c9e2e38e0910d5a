import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createManualClock } from '../../../src/core/clock.ts'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import { createSessionsRepository } from '../../../src/services/avatar/modules/sessions/sessions.repository.ts'
import { createSessionsService } from '../../../src/services/avatar/modules/sessions/sessions.service.ts'
import { createTestDatabase } from '../../helpers/build-app.ts'
import { buildAvatarApp, chat } from './helpers.ts'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('sessions', () => {
  it('creates a session on first use and records both messages with timestamps', async (t) => {
    const { app, clock } = await buildAvatarApp(t)
    const first = await chat(app, { sessionId: 'ses-1', userText: 'Hello' })
    clock.advance(5000)
    await chat(app, { sessionId: 'ses-1', userText: 'Why is the sky blue?' })
    const history = await app.inject({ method: 'GET', url: '/v1/session/ses-1/history' })
    assert.equal(history.statusCode, 200)
    const body = history.json()
    assert.equal(body.sessionId, 'ses-1')
    assert.deepEqual(
      body.messages.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'user', 'assistant'],
    )
    assert.deepEqual(body.messages[0], { role: 'user', content: 'Hello', timestamp: '2026-01-01T00:00:00.000Z' })
    assert.deepEqual(body.messages[1], {
      role: 'assistant',
      content: first.body.replyText,
      timestamp: '2026-01-01T00:00:00.000Z',
      emotion: first.body.emotion,
      action: first.body.action,
    })
    assert.equal(body.messages[2].timestamp, '2026-01-01T00:00:05.000Z')
    assert.equal(body.messages[3].action, 'think')
    for (const message of body.messages) assert.match(message.timestamp, ISO)
  })

  it('survives a restart on the same database', async (t) => {
    const database = await createTestDatabase(t)
    const clock = createManualClock()
    const first = await buildAvatarApp(t, { database, clock })
    await chat(first.app, { sessionId: 'keep-me', userText: 'Remember this' })
    await first.app.close()
    const second = await buildAvatarApp(t, { database, clock })
    const history = (await second.app.inject({ method: 'GET', url: '/v1/session/keep-me/history' })).json()
    assert.equal(history.messages.length, 2)
    assert.equal(history.messages[0].content, 'Remember this')
  })

  it('is shared by instances on one database', async (t) => {
    const database = await createTestDatabase(t)
    const clock = createManualClock()
    const llm = createFakeLlm({ pieces: ['ok'] })
    const first = await buildAvatarApp(t, { database, clock, llm })
    const second = await buildAvatarApp(t, { database, clock, llm })
    await chat(first.app, { sessionId: 'shared', userText: 'on the first' })
    await chat(second.app, { sessionId: 'shared', userText: 'on the second' })
    assert.deepEqual(
      llm.requests[1].slice(1).map((message) => message.content),
      ['on the first', 'ok', 'on the second'],
    )
    const history = (await first.app.inject({ method: 'GET', url: '/v1/session/shared/history' })).json()
    assert.equal(history.messages.length, 4)
    assert.equal((await second.app.inject({ method: 'DELETE', url: '/v1/session/shared' })).statusCode, 200)
    assert.equal((await first.app.inject({ method: 'GET', url: '/v1/session/shared/history' })).statusCode, 404)
  })

  it('sends only the last N messages to the model as context', async (t) => {
    const llm = createFakeLlm({ pieces: ['[emotion:neutral][action:speak] ok'] })
    const { app } = await buildAvatarApp(t, { llm, env: { AVATAR_HISTORY_LIMIT: '3' } })
    for (let i = 1; i <= 3; i++) await chat(app, { sessionId: 'ctx', userText: `message ${i}` })
    const last = llm.requests.at(-1) ?? []
    assert.deepEqual(
      last.slice(1).map((message) => `${message.role}:${message.content}`),
      ['assistant:ok', 'user:message 2', 'assistant:ok', 'user:message 3'],
    )
    // Another session's history never leaks in.
    await chat(app, { sessionId: 'other', userText: 'fresh' })
    assert.deepEqual(llm.requests.at(-1)?.slice(1), [{ role: 'user', content: 'fresh' }])
    // Without a session there is no context at all.
    await chat(app, { userText: 'alone' })
    assert.equal(llm.requests.at(-1)?.length, 2)
  })

  it('lists active sessions newest first, with limit and before', async (t) => {
    const { app, clock } = await buildAvatarApp(t)
    for (const id of ['a', 'b', 'c', 'd']) {
      await chat(app, { sessionId: id, userText: 'hi' })
      clock.advance(1000)
    }
    await chat(app, { sessionId: 'a', userText: 'again' })
    const all = (await app.inject({ method: 'GET', url: '/v1/sessions' })).json()
    assert.deepEqual(
      all.sessions.map((session: { id: string }) => session.id),
      ['d', 'c', 'b', 'a'],
    )
    assert.deepEqual(all.sessions[3], { id: 'a', created_at: '2026-01-01T00:00:00.000Z', message_count: 4 })
    const page1 = (await app.inject({ method: 'GET', url: '/v1/sessions?limit=2' })).json()
    assert.deepEqual(
      page1.sessions.map((session: { id: string }) => session.id),
      ['d', 'c'],
    )
    const page2 = (await app.inject({ method: 'GET', url: '/v1/sessions?limit=2&before=c' })).json()
    assert.deepEqual(
      page2.sessions.map((session: { id: string }) => session.id),
      ['b', 'a'],
    )
    const bad = await app.inject({ method: 'GET', url: '/v1/sessions?limit=0' })
    assert.equal(bad.statusCode, 400)
    assert.equal(typeof bad.json().detail, 'string')
    const unknownCursor = await app.inject({ method: 'GET', url: '/v1/sessions?before=nope' })
    assert.equal(unknownCursor.statusCode, 400)
    assert.match(unknownCursor.json().detail, /before/)
  })

  it('deletes a session; deleting it again, or one that never had a message, is a 200 with cleared false', async (t) => {
    const { app } = await buildAvatarApp(t)
    await chat(app, { sessionId: 'gone', userText: 'hi' })
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/session/gone' })
    assert.equal(deleted.statusCode, 200)
    assert.deepEqual(deleted.json(), { message: 'Session deleted', cleared: true })
    // The meta-human front end deletes on every "new conversation", chatted or not.
    for (const url of ['/v1/session/gone', '/v1/session/never-was']) {
      const again = await app.inject({ method: 'DELETE', url })
      assert.equal(again.statusCode, 200, url)
      assert.deepEqual(again.json(), { message: 'Session deleted', cleared: false })
    }
    const bad = await app.inject({ method: 'DELETE', url: '/v1/session/has%20space' })
    assert.equal(bad.statusCode, 400)
    assert.deepEqual(Object.keys(bad.json()), ['detail'])
    for (const request of [
      { method: 'GET' as const, url: '/v1/session/gone/history' },
      { method: 'GET' as const, url: '/v1/session/never-was/history' },
    ]) {
      const response = await app.inject(request)
      assert.equal(response.statusCode, 404)
      assert.deepEqual(Object.keys(response.json()), ['detail'])
      assert.match(response.json().detail, /Session not found/)
    }
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/sessions' })).json(), { sessions: [] })
    // The same id can start a new conversation afterwards.
    await chat(app, { sessionId: 'gone', userText: 'back' })
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/gone/history' })).json().messages.length, 2)
  })

  it('expires sessions idle longer than AVATAR_SESSION_TTL', async (t) => {
    const llm = createFakeLlm({ pieces: ['ok'] })
    const { app, clock } = await buildAvatarApp(t, { llm, env: { AVATAR_SESSION_TTL: '30m' } })
    await chat(app, { sessionId: 'idle', userText: 'first' })
    await chat(app, { sessionId: 'stale', userText: 'first' })
    await chat(app, { sessionId: 'busy', userText: 'first' })
    clock.advance(29 * 60_000)
    await chat(app, { sessionId: 'busy', userText: 'still here' })
    clock.advance(2 * 60_000)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/idle/history' })).statusCode, 404)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/busy/history' })).statusCode, 200)
    // An expired session counts as gone for delete too: nothing active was cleared.
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/v1/session/stale' })).json(), { message: 'Session deleted', cleared: false })
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/v1/session/busy' })).json(), { message: 'Session deleted', cleared: true })
    await chat(app, { sessionId: 'busy', userText: 'first' })
    assert.deepEqual(
      (await app.inject({ method: 'GET', url: '/v1/sessions' })).json().sessions.map((session: { id: string }) => session.id),
      ['busy'],
    )
    // An expired id starts afresh: no old context reaches the model, no old messages come back.
    await chat(app, { sessionId: 'idle', userText: 'hello again' })
    assert.deepEqual(llm.requests.at(-1)?.slice(1), [{ role: 'user', content: 'hello again' }])
    const history = (await app.inject({ method: 'GET', url: '/v1/session/idle/history' })).json()
    assert.deepEqual(
      history.messages.map((message: { content: string }) => message.content),
      ['hello again', 'ok'],
    )
  })

  it('keeps every message when one session is written concurrently', async (t) => {
    const { app } = await buildAvatarApp(t)
    await Promise.all(Array.from({ length: 8 }, (_, i) => chat(app, { sessionId: 'busy', userText: `parallel ${i}` })))
    const history = (await app.inject({ method: 'GET', url: '/v1/session/busy/history' })).json()
    assert.equal(history.messages.length, 16)
    const listed = (await app.inject({ method: 'GET', url: '/v1/sessions' })).json()
    assert.equal(listed.sessions[0].message_count, 16)
  })

  it('commits the exchanges of many concurrent sessions, each completely', async (t) => {
    const { app } = await buildAvatarApp(t)
    const ids = Array.from({ length: 30 }, (_, i) => `many-${i}`)
    await Promise.all(ids.flatMap((id) => [chat(app, { sessionId: id, userText: 'one' }), chat(app, { sessionId: id, userText: 'two' })]))
    const listed = (await app.inject({ method: 'GET', url: '/v1/sessions' })).json()
    assert.equal(listed.sessions.length, 30)
    for (const session of listed.sessions) assert.equal(session.message_count, 4)
    for (const id of ids) {
      const history = (await app.inject({ method: 'GET', url: `/v1/session/${id}/history` })).json()
      assert.deepEqual(
        history.messages.map((message: { role: string }) => message.role),
        ['user', 'assistant', 'user', 'assistant'],
      )
    }
  })

  it('keeps an appended message answered as stored when sweeping expired sessions fails after it, and sweeps again at the next append', async (t) => {
    // An operator's say is answered 200 exactly when it is stored: a sweep failing after the
    // commit must not turn it into an error.
    const { database, clock } = await buildAvatarApp(t)
    const repository = createSessionsRepository(database)
    let sweepsFailing = true
    const sweeps: string[] = []
    const failures: unknown[] = []
    const sessions = createSessionsService({
      repository: {
        ...repository,
        async deleteIdleSessions(cutoff) {
          sweeps.push(cutoff)
          if (sweepsFailing) throw new Error('the database went away')
          return repository.deleteIdleSessions(cutoff)
        },
      },
      clock,
      sessionTtlMs: 60_000,
      historyLimit: 10,
      onSweepFailed: (error) => failures.push(error),
    })
    const said = { emotion: 'neutral', action: 'speak', at: clock.now().toISOString() } as const
    await sessions.recordOperator('swept', { ...said, content: 'Stored, whatever the sweep does.' })
    assert.equal(failures.length, 1)
    assert.deepEqual((await sessions.history('swept')).messages.map((message) => message.content), ['Stored, whatever the sweep does.'])
    sweepsFailing = false
    await sessions.recordOperator('swept', { ...said, content: 'And the sweep runs again.' })
    assert.equal(sweeps.length, 2, 'a failed sweep is tried again at the next append, not a minute later')
    assert.equal(failures.length, 1)
  })
})
