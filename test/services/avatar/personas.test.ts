import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import { testConfig } from '../../helpers/build-app.ts'
import { buildAvatarApp, chat, readStream } from './helpers.ts'

/** A log stream that keeps every JSON line. */
function logLines() {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream }
}

function charactersFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'avatar-characters-')), 'characters.json')
  writeFileSync(file, JSON.stringify(content))
  return file
}

// The ids the meta-human front end sends (src/core/dialogue/characterPresets.ts there).
const FRONT_END_PRESETS = [
  ['lively-assistant', 'assistant', /Aria/],
  ['serious-advisor', 'advisor', /Dr\. Morgan/],
  ['cute-companion', 'companion', /Mimi/],
  ['pro-service', 'service', /customer-service/],
] as const

describe('characters: aliases and unknown ids', () => {
  it("plays the meta-human front end's presets as the built-in characters, and says which one replied", async (t) => {
    const llm = createFakeLlm({ pieces: ['ok'] })
    const { app } = await buildAvatarApp(t, { llm })
    for (const [index, [alias, id, prompt]] of FRONT_END_PRESETS.entries()) {
      const reply = await chat(app, { userText: 'hello', meta: { characterId: alias } })
      assert.equal(reply.status, 200)
      assert.match(llm.requests[index][0].content, prompt, alias)
      assert.equal(reply.headers['x-avatar-persona'], id)
      assert.equal(reply.headers['x-avatar-persona-unknown'], undefined)
    }
    const byId = await chat(app, { userText: 'hello', meta: { characterId: 'advisor' } })
    assert.equal(byId.headers['x-avatar-persona'], 'advisor')
    const none = await chat(app, { userText: 'hello' })
    assert.equal(none.headers['x-avatar-persona'], 'assistant')
    assert.equal(none.headers['x-avatar-persona-unknown'], undefined)
  })

  it('plays the default for an unknown id, with a warning in the log and a header naming the id', async (t) => {
    const { lines, stream } = logLines()
    const { app } = await buildAvatarApp(t, { env: { LOG_LEVEL: 'warn' }, logStream: stream })
    const reply = await chat(app, { userText: 'Hello', meta: { characterId: 'pirate-queen' } })
    assert.equal(reply.status, 200)
    assert.match(reply.body.replyText, /Aria/)
    assert.equal(reply.headers['x-avatar-persona'], 'assistant')
    assert.equal(reply.headers['x-avatar-persona-unknown'], 'pirate-queen')
    const warning = lines.find((line) => line.characterId === 'pirate-queen')
    assert.ok(warning, JSON.stringify(lines))
    assert.equal(warning.level, 40)
    assert.equal(warning.persona, 'assistant')
    assert.equal(warning.reqId, reply.headers['x-request-id'])

    // Ids are the client's: anything that cannot go in a header is percent-encoded, and long ones cut.
    const odd = await chat(app, { userText: 'Hello', meta: { characterId: '角色\r\nx-injected: 1' } })
    assert.equal(odd.status, 200)
    assert.equal(odd.headers['x-injected'], undefined)
    assert.equal(decodeURIComponent(String(odd.headers['x-avatar-persona-unknown'])), '角色\r\nx-injected: 1')
    const long = await chat(app, { userText: 'Hello', meta: { characterId: 'x'.repeat(500) } })
    assert.equal(long.headers['x-avatar-persona-unknown'], 'x'.repeat(64))
    assert.equal(lines.filter((line) => line.persona === 'assistant').length, 3)
  })

  it('refuses an id that is not text (a lone surrogate) with 400, and never cuts an emoji in half', async (t) => {
    const { app } = await buildAvatarApp(t)
    for (const characterId of ['\ud800', 'x\udfff', '\udfffx']) {
      for (const url of ['/v1/chat', '/v1/chat/stream']) {
        // JSON-escaped, so that the server's parser makes the lone surrogate.
        const reply = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ userText: 'hi', meta: { characterId } }) })
        assert.equal(reply.statusCode, 400, `${url} ${JSON.stringify(characterId)}: ${reply.body}`)
        assert.deepEqual(reply.json(), { detail: 'meta.characterId must be well-formed Unicode text (it holds a lone surrogate)' })
      }
    }
    // The header is cut at 64 UTF-16 units; an emoji across the cut is left out whole.
    const straddling = await chat(app, { userText: 'Hello', meta: { characterId: `${'x'.repeat(63)}😀` } })
    assert.equal(straddling.status, 200)
    assert.equal(straddling.headers['x-avatar-persona-unknown'], 'x'.repeat(63))
  })

  it('sets the same headers on the event stream, and logs an unknown id there too', async (t) => {
    const { lines, stream } = logLines()
    const { app } = await buildAvatarApp(t, { env: { LOG_LEVEL: 'warn' }, logStream: stream })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const known = await readStream(address, { userText: '你好', meta: { characterId: 'cute-companion' } })
    assert.equal(known.response.status, 200)
    assert.equal(known.response.headers.get('x-avatar-persona'), 'companion')
    assert.equal(known.response.headers.get('x-avatar-persona-unknown'), null)
    assert.match(String(known.events.at(-1)?.replyText), /咪咪/)

    const unknown = await readStream(address, { userText: 'hi', meta: { characterId: 'nobody' } })
    assert.equal(unknown.events.at(-1)?.type, 'done')
    assert.equal(unknown.response.headers.get('x-avatar-persona'), 'assistant')
    assert.equal(unknown.response.headers.get('x-avatar-persona-unknown'), 'nobody')
    assert.ok(lines.some((line) => line.characterId === 'nobody' && line.level === 40))
  })

  it('lets an operator file give aliases, keeps built-in aliases on a replaced character, and lets an id beat an alias', async (t) => {
    const file = charactersFile({
      characters: [
        { id: 'pirate', name: 'Captain Bo', prompt: 'You are Captain Bo, a pirate.', aliases: ['buccaneer', 'corsair'] },
        { id: 'assistant', name: 'Zed', prompt: 'You are Zed, terse.' },
        { id: 'pro-service', name: 'Vera', prompt: 'You are Vera, the concierge.' },
      ],
    })
    const llm = createFakeLlm({ pieces: ['ok'] })
    const { app } = await buildAvatarApp(t, { llm, env: { AVATAR_CHARACTERS_FILE: file } })
    const cases = [
      ['corsair', 'pirate', /Captain Bo/],
      ['lively-assistant', 'assistant', /Zed/],
      ['pro-service', 'pro-service', /Vera/],
      ['service', 'service', /customer-service/],
    ] as const
    for (const [index, [requested, id, prompt]] of cases.entries()) {
      const reply = await chat(app, { userText: 'hi', meta: { characterId: requested } })
      assert.equal(reply.headers['x-avatar-persona'], id, requested)
      assert.match(llm.requests[index][0].content, prompt, requested)
    }
  })

  it('refuses a character file whose aliases are ambiguous or malformed', () => {
    const twice = charactersFile({
      characters: [
        { id: 'a', name: 'A', prompt: 'A.', aliases: ['shared'] },
        { id: 'b', name: 'B', prompt: 'B.', aliases: ['shared'] },
      ],
    })
    assert.throws(() => testConfig({ AVATAR_CHARACTERS_FILE: twice }), /alias shared to two characters: a and b/)
    const stolen = charactersFile({ characters: [{ id: 'x', name: 'X', prompt: 'X.', aliases: ['cute-companion'] }] })
    assert.throws(() => testConfig({ AVATAR_CHARACTERS_FILE: stolen }), /alias cute-companion to two characters: companion and x/)
    const malformed = charactersFile({ characters: [{ id: 'x', name: 'X', prompt: 'X.', aliases: ['has space'] }] })
    assert.throws(() => testConfig({ AVATAR_CHARACTERS_FILE: malformed }), /AVATAR_CHARACTERS_FILE is not a valid character file: \/characters\/0\/aliases\/0/)
  })
})
