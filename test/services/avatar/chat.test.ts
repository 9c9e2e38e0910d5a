import assert from 'node:assert/strict'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ConfigError } from '../../../src/config.ts'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import { testConfig } from '../../helpers/build-app.ts'
import { buildAvatarApp, chat } from './helpers.ts'

describe('POST /v1/chat', () => {
  it('answers with the mock when no model is configured', async (t) => {
    const { app } = await buildAvatarApp(t)
    const english = await chat(app, { userText: 'Hello there' })
    assert.equal(english.status, 200)
    assert.deepEqual(Object.keys(english.body).sort(), ['action', 'emotion', 'replyText'])
    assert.equal(english.body.emotion, 'happy')
    assert.ok(['greet', 'wave'].includes(english.body.action))
    assert.doesNotMatch(english.body.replyText, /\p{Script=Han}/u)

    const chinese = await chat(app, { userText: '你好' })
    assert.match(chinese.body.replyText, /\p{Script=Han}/u)
    assert.deepEqual((await chat(app, { userText: '你好' })).body, chinese.body)
  })

  it('refuses a request without userText, naming the field', async (t) => {
    const { app } = await buildAvatarApp(t)
    const response = await chat(app, { sessionId: 'abc' })
    assert.equal(response.status, 400)
    assert.deepEqual(response.body, { detail: 'missing required field userText' })
  })

  it('refuses wrong types, empty and over-long text, and bad session ids with a {detail} 400', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_MAX_TEXT_LENGTH: '10' } })
    const cases: [unknown, RegExp][] = [
      [{ userText: 123 }, /^userText must be a string$/],
      [{ userText: ['hi'] }, /^userText must be a string$/],
      [{ userText: '' }, /^userText must not be empty$/],
      [{ userText: '   \n ' }, /^userText must not be empty$/],
      [{ userText: 'x'.repeat(11) }, /^userText must be at most 10 characters$/],
      [{ userText: 'hi', meta: 'nope' }, /^meta must be a JSON object$/],
      [{ userText: 'hi', meta: { characterId: 5 } }, /^meta\.characterId must be a string$/],
      [{ userText: 'hi', sessionId: 42 }, /^sessionId must be a string$/],
      [{ userText: 'hi', sessionId: 'has spaces/and slashes' }, /^sessionId must be 1 to 128 letters/],
      [{ userText: 'hi', meta: { blob: 'x'.repeat(5000) } }, /^meta must be at most 4000 characters as JSON$/],
      [[1, 2], /^request body must be a JSON object$/],
    ]
    for (const [body, detail] of cases) {
      const response = await chat(app, body)
      assert.equal(response.status, 400, JSON.stringify(body))
      assert.equal(typeof response.body.detail, 'string')
      assert.match(response.body.detail, detail)
    }
    assert.equal((await chat(app, { userText: 'x'.repeat(10) })).status, 200)
  })

  it('refuses malformed JSON, an empty body and a non-JSON body with {detail}', async (t) => {
    const { app } = await buildAvatarApp(t)
    const send = (payload: string, type = 'application/json') => app.inject({ method: 'POST', url: '/v1/chat', headers: { 'content-type': type }, payload })
    const malformed = await send('{"userText": "hi"')
    assert.equal(malformed.statusCode, 400)
    assert.deepEqual(malformed.json(), { detail: 'Malformed JSON in request body' })
    const empty = await send('')
    assert.equal(empty.statusCode, 400)
    assert.match(empty.json().detail, /empty/)
    const text = await send('hello', 'text/plain')
    assert.equal(text.statusCode, 400)
    assert.deepEqual(text.json(), { detail: 'request body must be a JSON object' })
    const xml = await send('<userText>hi</userText>', 'application/xml')
    assert.equal(xml.statusCode, 415)
    assert.equal(typeof xml.json().detail, 'string')
    const none = await app.inject({ method: 'POST', url: '/v1/chat' })
    assert.equal(none.statusCode, 400)
    assert.match(none.json().detail, /JSON object/)
  })

  it('answers an internal failure with the fallback 500 detail', async (t) => {
    const { app, database } = await buildAvatarApp(t)
    // Breaking the storage is the simplest way to make a session write fail for real.
    await database.db.schema.dropTable('avatar_messages').execute()
    const response = await chat(app, { userText: 'hi', sessionId: 'broken' })
    assert.equal(response.status, 500)
    assert.deepEqual(response.body, { detail: 'Internal server error. Fallback mode activated.' })
  })

  it('sends the persona, the meta context and the user text to the model', async (t) => {
    const llm = createFakeLlm({ pieces: ['[emotion:sad][action:nod] I am sorry.'] })
    const { app } = await buildAvatarApp(t, { llm })
    const reply = await chat(app, { userText: 'My cat is ill', meta: { characterId: 'advisor', userName: 'Kim', mood: 'worried' } })
    assert.deepEqual(reply.body, { replyText: 'I am sorry.', emotion: 'sad', action: 'nod' })
    const [system, user] = llm.requests[0]
    assert.equal(system.role, 'system')
    assert.match(system.content, /Dr\. Morgan/)
    assert.match(system.content, /\[emotion:/)
    assert.match(system.content, /"userName":"Kim"/)
    assert.doesNotMatch(system.content, /characterId/)
    assert.deepEqual(user, { role: 'user', content: 'My cat is ill' })

    await chat(app, { userText: 'hello', meta: { characterId: 'no-such-character' } })
    assert.match(llm.requests[1][0].content, /Aria/)
    await chat(app, { userText: 'hello', meta: { characterId: 'companion' } })
    assert.match(llm.requests[2][0].content, /Mimi/)
    await chat(app, { userText: 'hello', meta: { characterId: 'service' } })
    assert.match(llm.requests[3][0].content, /customer-service/)
  })

  it('lets operators add characters from a file and replace the default prompt', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'avatar-characters-'))
    const file = join(dir, 'characters.json')
    writeFileSync(file, JSON.stringify({ default: 'pirate', characters: [{ id: 'pirate', name: 'Captain Bo', prompt: 'You are Captain Bo, a pirate.' }] }))
    const llm = createFakeLlm({ pieces: ['Arr!'] })
    const { app } = await buildAvatarApp(t, { llm, env: { AVATAR_CHARACTERS_FILE: file } })
    await chat(app, { userText: 'hi' })
    assert.match(llm.requests[0][0].content, /Captain Bo/)
    await chat(app, { userText: 'hi', meta: { characterId: 'advisor' } })
    assert.match(llm.requests[1][0].content, /Dr\. Morgan/)

    const custom = createFakeLlm({ pieces: ['ok'] })
    const { app: other } = await buildAvatarApp(t, { llm: custom, env: { AVATAR_SYSTEM_PROMPT: 'You are Zed, terse.' } })
    await chat(other, { userText: 'hi' })
    assert.match(custom.requests[0][0].content, /^You are Zed, terse\./)

    writeFileSync(file, '{"characters": [{"id": "x"}]}')
    assert.throws(() => testConfig({ AVATAR_CHARACTERS_FILE: file }), ConfigError)
    assert.throws(() => testConfig({ AVATAR_CHARACTERS_FILE: join(dir, 'missing.json') }), /AVATAR_CHARACTERS_FILE/)
  })

  it('mock replies pick up the chosen character', async (t) => {
    const { app } = await buildAvatarApp(t)
    assert.match((await chat(app, { userText: 'Hello', meta: { characterId: 'companion' } })).body.replyText, /Mimi/)
    assert.match((await chat(app, { userText: '你好', meta: { characterId: 'companion' } })).body.replyText, /咪咪/)
  })
})
