import assert from 'node:assert/strict'
import { once } from 'node:events'
import { before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { createFakeAsrProvider } from '../../../../src/services/avatar/providers/asr/asr.fake.ts'
import { pocketsphinxInstalled } from '../../../../src/services/avatar/providers/asr/pocketsphinx.asr.ts'
import { pocketsphinxDecoders } from '../../../../src/services/avatar/providers/asr/pocketsphinx.stream.ts'
import { decodeWav } from '../../../../src/services/avatar/providers/asr/wav-decode.ts'
import { createFakeLlm } from '../../../../src/services/avatar/providers/llm/llm.fake.ts'
import type { LlmPort, LlmRequest } from '../../../../src/services/avatar/providers/llm/llm.port.ts'
import { createFakeTtsProvider } from '../../../../src/services/avatar/providers/tts/tts.fake.ts'
import type { TtsProvider } from '../../../../src/services/avatar/providers/tts/tts.port.ts'
import { VISEMES } from '../../../../src/services/avatar/modules/speech/index.ts'
import { engineIndependent } from '../../../helpers/build-app.ts'
import { buildAvatarApp } from '../helpers.ts'
import { framesOf, noisePcm, RATE, silencePcm, speechPcm } from './audio.ts'

type Frame = Record<string, unknown> & { type: string }

/** `promise`, or a failure after `ms`: a missing frame fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, what: () => string, ms = 15_000): Promise<T> {
  return Promise.race([promise, sleep(ms, undefined, { ref: false }).then(() => assert.fail(`timed out waiting for ${what()}`))])
}

interface Client {
  socket: WebSocket
  frames: Frame[]
  send(frame: unknown): void
  /** Sends PCM as a page does: 20 ms binary frames. */
  speak(pcm: Buffer): void
  /** Sends PCM at the pace of a microphone: a 20 ms frame every 20 ms. */
  speakInRealTime(pcm: Buffer): Promise<void>
  /** The first frame from index `from` on that matches; waits (bounded) for it. */
  waitFor(match: (frame: Frame) => boolean, what: string, from?: number): Promise<Frame>
}

async function openClient(base: string, sessionId: string): Promise<Client> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?session_id=${sessionId}`)
  const frames: Frame[] = []
  const waiters = new Set<() => void>()
  socket.on('message', (data, isBinary) => {
    assert.equal(isBinary, false, 'the server sends text frames only')
    frames.push(JSON.parse(data.toString()) as Frame)
    for (const wake of waiters) wake()
  })
  await once(socket, 'open')
  return {
    socket,
    frames,
    send: (frame) => socket.send(Buffer.isBuffer(frame) ? frame : JSON.stringify(frame)),
    speak(pcm) {
      for (const frame of framesOf(pcm)) socket.send(frame)
    },
    async speakInRealTime(pcm) {
      const start = performance.now()
      for (const [index, frame] of framesOf(pcm).entries()) {
        const wait = start + index * 20 - performance.now()
        if (wait > 0) await sleep(wait)
        socket.send(frame)
      }
    },
    waitFor(match, what, from = 0) {
      const find = () => frames.slice(from).find(match)
      return within(
        new Promise<Frame>((resolve) => {
          const check = () => {
            const found = find()
            if (!found) return
            waiters.delete(check)
            resolve(found)
          }
          waiters.add(check)
          check()
        }),
        () => `${what}; frames so far: ${JSON.stringify(frames.map((frame) => ({ ...frame, audio: undefined, visemes: undefined })))}`,
      )
    },
  }
}

/**
 * The session's history once it holds `count` messages: a spoken exchange is stored when the
 * page has played the reply (its audio's duration after it was sent), or at the interruption.
 */
async function storedMessages(app: { inject: (options: { method: 'GET'; url: string }) => Promise<{ json(): unknown }> }, sessionId: string, count: number) {
  for (let attempt = 0; ; attempt++) {
    const body = (await app.inject({ method: 'GET', url: `/v1/session/${sessionId}/history` })).json() as {
      messages?: Array<{ role: string; content: string; emotion?: string }>
    }
    if ((body.messages?.length ?? 0) >= count || attempt >= 1500) return body.messages ?? []
    await sleep(10)
  }
}

const is = (type: string, extra: (frame: Frame) => boolean = () => true) => (frame: Frame) => frame.type === type && extra(frame)

/**
 * A model that writes its first sentence, then waits for `release` (or its abort) before the
 * rest: a reply whose audio can only reach the client while the model is still writing if
 * synthesis starts at the first sentence end.
 */
function gatedModel(first: string[], rest: string[]) {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const state = { aborted: false, finished: false }
  const model: LlmPort = {
    name: 'gated',
    complete: async () => 'unused',
    async *stream(request: LlmRequest) {
      request.signal.addEventListener('abort', () => (state.aborted = true))
      for (const piece of first) yield piece
      await Promise.race([released, once(request.signal, 'abort')])
      request.signal.throwIfAborted()
      for (const piece of rest) yield piece
      state.finished = true
    },
  }
  return { model, release, state }
}

describe('voice mode on /ws', { skip: engineIndependent }, () => {
  let hello: Buffer
  let hm: Buffer
  let ah: Buffer
  let weather: Buffer
  before(async () => {
    ;[hello, hm, ah, weather] = await speechPcm(['Hello avatar, how are you today?', 'Hm.', 'Ah', 'What is the weather like today?'])
  })

  const localRecognizer = pocketsphinxInstalled({ command: 'pocketsphinx_continuous', modelDir: '/usr/share/pocketsphinx/model/en-us' })
  it(
    'talks end to end with the local components: pocketsphinx hears the turn as it is spoken (partials before the end of the turn, the final transcript after), the mock answers, espeak-ng speaks each sentence with its visemes',
    { skip: !localRecognizer && 'pocketsphinx and pocketsphinx-en-us are not installed (apt-get install pocketsphinx pocketsphinx-en-us)' },
    async (t) => {
      // No fakes: the providers the configuration gives (pocketsphinx, espeak-ng's library) and the mock model.
      const { app } = await buildAvatarApp(t, { env: { AVATAR_ASR_PROVIDER: 'pocketsphinx', AVATAR_TTS_THREADS: '1' } })
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      const client = await openClient(base, 'voice-local')
      // A decoder loaded before the person speaks, as one is after an instance's first turn.
      const decoders = pocketsphinxDecoders('/usr/share/pocketsphinx/model/en-us')
      if (decoders) decoders.release(await decoders.acquire())
      client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
      // Two sentences without a pause long enough to end the turn, at a microphone's pace.
      await client.speakInRealTime(Buffer.concat([silencePcm(300), hello, silencePcm(100), weather, silencePcm(1200)]))
      const transcript = await client.waitFor(is('transcript', (frame) => frame.final === true), 'the final transcript')
      // Partial transcripts, when the decoder kept up with the speech (how many depends on the
      // CPU it got: none on a machine too loaded for it), come before the end of the turn and
      // are never empty; the final one comes after it. (That partials are read while the person
      // speaks is shown with a recogniser that is never late, below.)
      const partials = client.frames.filter(is('transcript', (frame) => frame.final === false))
      const endOfTurn = client.frames.findIndex(is('vad', (frame) => frame.speaking === false))
      for (const partial of partials) assert.ok(String(partial.text).length > 0 && client.frames.indexOf(partial) < endOfTurn)
      assert.ok(endOfTurn < client.frames.indexOf(transcript))
      t.diagnostic(`${partials.length} partial transcripts: ${JSON.stringify(partials.map((partial) => partial.text))}`)
      // pocketsphinx hears espeak's "What is the weather like today?" as, for instance, "what is
      // a winner like that do you" (its default model on synthetic speech): some words, not all.
      const said = new Set(['hello', 'avatar', 'how', 'are', 'you', 'today', 'what', 'is', 'the', 'weather', 'like'])
      const heard = String(transcript.text).split(/\s+/).filter((word) => said.has(word))
      assert.ok(new Set(heard).size >= 4, `heard ${JSON.stringify(transcript.text)}`)
      const done = await client.waitFor(is('done'), 'done')
      const audio = client.frames.filter((frame) => frame.type === 'audio')
      assert.ok(audio.length >= 1)
      assert.equal(audio.map((frame) => frame.text).join(' '), done.replyText)
      for (const frame of audio) {
        const wav = decodeWav(Buffer.from(String(frame.audio), 'base64'))
        assert.equal(wav?.sampleRate, 22050)
        const visemes = frame.visemes as Array<{ viseme: string; end_ms: number }>
        // Real speech moves the mouth through several shapes and rests at the ends.
        assert.ok(new Set(visemes.map((span) => span.viseme)).size >= 4)
        assert.equal(visemes.at(-1)?.end_ms, frame.durationMs)
      }
      assert.deepEqual(
        (await storedMessages(app, 'voice-local', 2)).map((message) => message.content),
        [transcript.text, done.replyText],
      )
      client.socket.close()
    },
  )

  it('answers a spoken turn: vad, transcript, the tokens, each sentence as audio with visemes while the model still writes, done last; stored as a chat turn', async (t) => {
    const asr = createFakeAsrProvider({ text: 'hello avatar' })
    const tts = createFakeTtsProvider()
    const { model, release, state } = gatedModel(['[emotion:happy][action:wave] Hello', ' there.', ' How are'], [' you today?'])
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm: model, asr, tts } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-1')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    client.speak(Buffer.concat([silencePcm(300), hello, silencePcm(1200)]))
    assert.deepEqual(await client.waitFor(is('voice.started'), 'voice.started'), { type: 'voice.started', sampleRate: 16000, endOfTurnMs: 300, minSpeechMs: 250 })
    const speaking = await client.waitFor(is('vad', (frame) => frame.speaking === true), 'speech start')
    const ended = await client.waitFor(is('vad', (frame) => frame.speaking === false), 'end of turn')
    // Positions in the audio sent: speech starts after the leading 300 ms and is heard for the
    // least speech (250 ms) before it counts; the turn ends 300 ms after the detector last hears
    // speech (the synthesiser's own trailing pause and the model's hangover add up to 0.5 s).
    assert.ok(Number(speaking.atMs) > 300 && Number(speaking.atMs) < 1200, `speech at ${speaking.atMs}`)
    const utteranceEnd = 300 + hello.length / 2 / (RATE / 1000)
    assert.ok(Number(ended.atMs) >= utteranceEnd && Number(ended.atMs) <= utteranceEnd + 1000, `turn ended at ${ended.atMs}, utterance to ${utteranceEnd}`)
    assert.deepEqual(await client.waitFor(is('transcript'), 'the transcript'), { type: 'transcript', text: 'hello avatar', final: true })

    // The first sentence is heard before the model has written the rest.
    const first = await client.waitFor(is('audio'), 'the first sentence as audio')
    assert.equal(state.finished, false)
    assert.equal(first.index, 0)
    assert.equal(first.text, 'Hello there.')
    assert.equal(first.format, 'wav')
    const wav = decodeWav(Buffer.from(String(first.audio), 'base64'))
    assert.ok(wav, 'the audio is a WAV file')
    assert.ok(Math.abs((wav.samples.length / wav.sampleRate) * 1000 - Number(first.durationMs)) <= 1)
    const visemes = first.visemes as Array<{ viseme: string; start_ms: number; end_ms: number }>
    assert.ok(visemes.length > 0 && visemes.every((span) => (VISEMES as readonly string[]).includes(span.viseme)))
    assert.equal(visemes.at(-1)?.end_ms, first.durationMs)
    release()

    const done = await client.waitFor(is('done'), 'done')
    assert.deepEqual(done, { type: 'done', replyText: 'Hello there. How are you today?', emotion: 'happy', action: 'wave' })
    const turn = client.frames.slice(client.frames.indexOf(speaking))
    const tokens = turn.filter((frame) => frame.type === 'token').map((frame) => frame.content)
    assert.equal(tokens.join(''), done.replyText)
    const audio = turn.filter((frame) => frame.type === 'audio')
    assert.deepEqual(
      audio.map((frame) => [frame.index, frame.text]),
      [
        [0, 'Hello there.'],
        [1, 'How are you today?'],
      ],
    )
    // done comes after the last audio; the first audio came before the last token.
    assert.equal(turn.at(-1), done)
    assert.ok(turn.indexOf(audio[0]) < turn.findLastIndex((frame) => frame.type === 'token'))
    assert.deepEqual(tts.requests.map((request) => request.text), ['Hello there.', 'How are you today?'])

    // The recogniser got the utterance as 16 kHz WAV, about as long as it was spoken.
    const heard = decodeWav(asr.requests[0].audio)
    assert.equal(heard?.sampleRate, 16000)
    const seconds = (heard?.samples.length ?? 0) / 16000
    assert.ok(seconds > hello.length / 2 / RATE - 0.3 && seconds < hello.length / 2 / RATE + 1, `utterance of ${seconds} s`)

    // Not yet stored: the page is still playing the reply (1.9 s of the fake's audio).
    assert.equal((await storedMessages(app, 'voice-1', 0)).length, 0)
    assert.deepEqual(
      (await storedMessages(app, 'voice-1', 2)).map(({ role, content, emotion }) => ({ role, content, emotion })),
      [
        { role: 'user', content: 'hello avatar', emotion: undefined },
        { role: 'assistant', content: 'Hello there. How are you today?', emotion: 'happy' },
      ],
    )

    // Typed chat still works on the socket in voice mode.
    const from = client.frames.length
    client.send({ type: 'chat', userText: 'And typed?' })
    assert.equal((await client.waitFor(is('done'), 'the typed reply', from)).type, 'done')
    client.send({ type: 'voice.stop' })
    await client.waitFor(is('voice.stopped'), 'voice.stopped')
    client.socket.close()
  })

  it('recognises as the person speaks when the recogniser streams: partial transcripts before the end of the turn, the final one after, noise dropped', async (t) => {
    const asr = createFakeAsrProvider({ text: 'hello avatar', streaming: true })
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm: createFakeLlm(), asr, tts: createFakeTtsProvider() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-streaming')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    // A hiss first: the detector may open an utterance on it, which then makes no turn.
    client.speak(Buffer.concat([silencePcm(300), noisePcm(200), silencePcm(600), hello, silencePcm(1200)]))
    const final = await client.waitFor(is('transcript', (frame) => frame.final === true), 'the final transcript')
    assert.deepEqual(final, { type: 'transcript', text: 'hello avatar', final: true })
    const partial = await client.waitFor(is('transcript', (frame) => frame.final === false), 'a partial transcript')
    assert.deepEqual(partial, { type: 'transcript', text: 'hello', final: false })
    const endOfTurn = client.frames.findIndex(is('vad', (frame) => frame.speaking === false))
    assert.ok(client.frames.indexOf(partial) < endOfTurn && endOfTurn < client.frames.indexOf(final), 'partials while speaking, the final transcript after the end of the turn')
    await client.waitFor(is('done'), 'the reply')
    // Nothing went to the whole-utterance path; the turn's utterance was streamed in full and finished.
    assert.equal(asr.requests.length, 0)
    const turn = asr.utterances.filter((utterance) => utterance.ended === 'finished')
    assert.equal(turn.length, 1)
    assert.ok(turn[0].samples >= hello.length / 2 - RATE * 0.3, `${turn[0].samples} samples streamed`)
    assert.ok(asr.utterances.every((utterance) => utterance.ended !== undefined), 'every utterance ended, finished or dropped')
    client.socket.close()
  })

  it('gives no turn to noise or to a burst shorter than the least speech, and the least speech is the client\'s to set', async (t) => {
    const asr = createFakeAsrProvider()
    const { app } = await buildAvatarApp(t, { deps: { avatar: { asr, tts: createFakeTtsProvider(), llm: createFakeLlm() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })

    const strict = await openClient(base, 'voice-noise')
    strict.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300, minSpeechMs: 600 })
    // A loud hiss, a short "ah" (250 ms) and a "hm" (about 500 ms): none is 600 ms of speech.
    strict.speak(Buffer.concat([silencePcm(200), noisePcm(400), silencePcm(600), ah, silencePcm(600), hm, silencePcm(800)]))
    strict.send({ type: 'voice.stop' })
    await strict.waitFor(is('voice.stopped'), 'voice.stopped')
    assert.deepEqual(
      strict.frames.map((frame) => frame.type),
      ['voice.started', 'voice.stopped'],
    )
    assert.equal(asr.requests.length, 0)

    // The same "hm" is a turn when 250 ms of speech is enough.
    const lenient = await openClient(base, 'voice-hm')
    lenient.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300, minSpeechMs: 250 })
    lenient.speak(Buffer.concat([silencePcm(200), hm, silencePcm(800)]))
    await lenient.waitFor(is('done'), 'the reply to hm')
    assert.equal(asr.requests.length, 1)
    strict.socket.close()
    lenient.socket.close()
  })

  it('ends a turn after the silence the client sets', async (t) => {
    const { app } = await buildAvatarApp(t, { deps: { avatar: { asr: createFakeAsrProvider(), tts: createFakeTtsProvider(), llm: createFakeLlm() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const ends: number[] = []
    for (const endOfTurnMs of [300, 1200]) {
      const client = await openClient(base, `voice-eot-${endOfTurnMs}`)
      client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs })
      client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(2500)]))
      ends.push(Number((await client.waitFor(is('vad', (frame) => frame.speaking === false), 'end of turn')).atMs))
      await client.waitFor(is('done'), 'the reply')
      client.socket.close()
    }
    // 900 ms more silence wanted, 900 ms later (to a frame of 32 ms).
    assert.ok(Math.abs(ends[1] - ends[0] - 900) <= 64, `turn ends at ${ends}`)
  })

  it('stops the reply when the person speaks over it: interrupted, the model cancelled, no more audio, and the history keeps what was said', async (t) => {
    const asr = createFakeAsrProvider({ text: 'tell me a story' })
    const tts = createFakeTtsProvider()
    const { model, state } = gatedModel(['[emotion:happy][action:speak] Once upon a time.', ' There was'], [' a fox.'])
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm: model, asr, tts } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-barge')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(1200)]))
    await client.waitFor(is('audio'), 'the first sentence')
    const from = client.frames.length
    // The model waits, still writing; the person talks again, at a microphone's pace, once the
    // first sentence has started playing (20 ms after it was sent).
    await client.speakInRealTime(Buffer.concat([silencePcm(100), hm, silencePcm(100)]))
    // The page is told to stop at the first frame of speech, before it is known to be speech;
    // the interruption follows once it has lasted minSpeechMs.
    const paused = await client.waitFor(is('paused'), 'paused', from)
    const barge = await client.waitFor(is('vad', (frame) => frame.speaking === true), 'the barge-in', from)
    assert.ok(client.frames.indexOf(paused) < client.frames.indexOf(barge))
    assert.ok(Number(paused.atMs) < Number(barge.atMs), `paused at ${paused.atMs}, speech confirmed at ${barge.atMs}`)
    const interrupted = await client.waitFor(is('interrupted'), 'interrupted', from)
    assert.deepEqual(interrupted, { type: 'interrupted', replyText: 'Once upon a time.' })
    assert.equal(state.aborted, true)
    assert.equal(state.finished, false)
    const cut = client.frames.indexOf(interrupted)
    assert.ok(client.frames.slice(cut).every((frame) => frame.type !== 'token' && frame.type !== 'audio' && frame.type !== 'done'))
    assert.deepEqual(
      (await storedMessages(app, 'voice-barge', 2)).map(({ role, content }) => [role, content]),
      [
        ['user', 'tell me a story'],
        ['assistant', 'Once upon a time.'],
      ],
    )
    client.socket.close()
  })

  it('tells the page to stop at once, even while a sentence is still being synthesised by a provider slow to stop', async (t) => {
    const base = createFakeTtsProvider()
    let stuckStarted = () => {}
    const started = new Promise<void>((resolve) => (stuckStarted = resolve))
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    // The second sentence's synthesis notices nothing until the test lets it fail.
    const tts: TtsProvider = {
      ...base,
      async synthesize(request) {
        if (!request.text.startsWith('There')) return base.synthesize(request)
        stuckStarted()
        await released
        throw new Error('stopped late')
      },
    }
    const llm = createFakeLlm({ pieces: ['[emotion:happy][action:speak] Once upon a time.', ' There was a fox.', ' The end.'] })
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm, asr: createFakeAsrProvider({ text: 'a story please' }), tts } } })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(url, 'voice-stuck')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(1200)]))
    await client.waitFor(is('audio'), 'the first sentence')
    await started
    const from = client.frames.length
    await client.speakInRealTime(Buffer.concat([silencePcm(100), hm, silencePcm(100)]))
    const barge = await client.waitFor(is('vad', (frame) => frame.speaking === true), 'the barge-in', from)
    const interrupted = await client.waitFor(is('interrupted'), 'interrupted while the synthesis is stuck', from)
    assert.deepEqual(interrupted, { type: 'interrupted', replyText: 'Once upon a time.' })
    assert.equal(client.frames.indexOf(interrupted), client.frames.indexOf(barge) + 1, 'interrupted right after the speech that caused it')
    release()
    // Stored once the reply has unwound.
    assert.deepEqual(
      (await storedMessages(app, 'voice-stuck', 2)).map((message) => message.content),
      ['a story please', 'Once upon a time.'],
    )
    client.socket.close()
  })

  it('starts the reply at the pause, before the end of the turn, and sends it the moment the turn ends when the transcript is the one guessed', async (t) => {
    const asr = createFakeAsrProvider({ text: 'hello avatar', streaming: true, partial: 'whole' })
    let modelStarted: number | undefined
    const llm = createFakeLlm({ pieces: ['[emotion:happy][action:wave] Hello', ' there.', ' Nice day.'] })
    const counted: LlmPort = {
      ...llm,
      stream(request) {
        modelStarted ??= performance.now()
        return llm.stream(request)
      },
    }
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm: counted, asr, tts: createFakeTtsProvider() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-preemptive')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 500 })
    await client.waitFor(is('voice.started'), 'voice.started')
    let endOfTurnAt: number | undefined
    client.socket.on('message', (data) => {
      if (endOfTurnAt === undefined && String(data).includes('"speaking":false')) endOfTurnAt = performance.now()
    })
    await client.speakInRealTime(Buffer.concat([silencePcm(200), hello, silencePcm(700)]))
    const done = await client.waitFor(is('done'), 'done')
    assert.ok(modelStarted !== undefined && endOfTurnAt !== undefined)
    // The model was asked 150 ms before the 500 ms of silence were over (to a frame of 32 ms), not after them.
    assert.ok(modelStarted < endOfTurnAt - 100, `model asked ${Math.round(endOfTurnAt - modelStarted)} ms before the end of the turn`)
    // Nothing of the reply reached the client before the end of the turn; then all of it, in order, once.
    const types = client.frames.map((frame) => frame.type)
    const end = client.frames.findIndex(is('vad', (frame) => frame.speaking === false))
    assert.ok(types.slice(0, end).every((type) => type === 'voice.started' || type === 'vad' || type === 'transcript'))
    assert.deepEqual(client.frames.slice(end + 1, end + 2), [{ type: 'transcript', text: 'hello avatar', final: true }])
    assert.equal(types.filter((type) => type === 'done').length, 1)
    assert.equal(client.frames.filter(is('transcript', (frame) => frame.final === true)).length, 1)
    assert.equal(done.replyText, 'Hello there. Nice day.')
    assert.equal(llm.requests.length, 1)
    assert.deepEqual(
      (await storedMessages(app, 'voice-preemptive', 2)).map((message) => message.content),
      ['hello avatar', 'Hello there. Nice day.'],
    )
    client.socket.close()
  })

  it('drops a reply started at a pause when the person speaks on, or when the transcript is not the one guessed: nothing of it is sent or stored', async (t) => {
    // The guess at each pause is the first word only: never the whole transcript.
    const asr = createFakeAsrProvider({ text: 'hello avatar', streaming: true })
    const llm = createFakeLlm({ pieces: ['[emotion:happy][action:wave] Hi', ' you.'] })
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm, asr, tts: createFakeTtsProvider() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-preempt-dropped')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    // A 250 ms pause inside the turn (a reply starts after 150 ms of it, then the person goes on), then the end.
    await client.speakInRealTime(Buffer.concat([silencePcm(200), hello, silencePcm(250), weather, silencePcm(700)]))
    await client.waitFor(is('done'), 'done')
    // Asked at the pause ("hello"), at the end of speech ("hello" again), and for the turn.
    assert.ok(llm.requests.length >= 2, `${llm.requests.length} model calls`)
    assert.equal(llm.requests.at(-1)?.at(-1)?.content, 'hello avatar')
    assert.equal(client.frames.filter(is('transcript', (frame) => frame.final === true)).length, 1)
    assert.equal(client.frames.filter(is('done')).length, 1)
    assert.equal(client.frames.filter(is('token')).map((frame) => frame.content).join(''), 'Hi you.')
    assert.ok(!client.frames.some((frame) => frame.type === 'paused' || frame.type === 'interrupted'))
    assert.deepEqual(
      (await storedMessages(app, 'voice-preempt-dropped', 2)).map((message) => message.content),
      ['hello avatar', 'Hi you.'],
    )
    client.socket.close()
  })

  it('pauses at a sound over the reply and resumes when it is too short to be speech (a cough): the reply goes on whole', async (t) => {
    const asr = createFakeAsrProvider({ text: 'tell me a story' })
    const { model, release } = gatedModel(['[emotion:happy][action:speak] Once upon a time.', ' There was'], [' a fox.'])
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm: model, asr, tts: createFakeTtsProvider() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-cough')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300, minSpeechMs: 600 })
    client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(1200)]))
    // (hello is 600 ms of speech and more; "ah" is not.)
    await client.waitFor(is('audio'), 'the first sentence')
    const from = client.frames.length
    await client.speakInRealTime(Buffer.concat([silencePcm(100), ah, silencePcm(400)]))
    await client.waitFor(is('paused'), 'paused', from)
    await client.waitFor(is('resumed'), 'resumed', from)
    release()
    const done = await client.waitFor(is('done'), 'done', from)
    assert.equal(done.replyText, 'Once upon a time. There was a fox.')
    assert.ok(!client.frames.slice(from).some((frame) => frame.type === 'interrupted' || frame.type === 'vad'))
    // The sentence written while paused came after `resumed`.
    const resumedAt = client.frames.findIndex(is('resumed'))
    assert.ok(client.frames.findIndex(is('audio', (frame) => frame.index === 1)) > resumedAt)
    assert.deepEqual(
      (await storedMessages(app, 'voice-cough', 2)).map((message) => message.content),
      ['tell me a story', 'Once upon a time. There was a fox.'],
    )
    client.socket.close()
  })

  it('is interrupted while the page still plays a reply the server has finished sending, and stores the sentences that had started playing', async (t) => {
    // Each sentence plays for a second or more (the fake speaks 60 ms a character).
    const llm = createFakeLlm({ pieces: ['[emotion:happy][action:speak] Once upon a time.', ' There was a fox.', ' The end of it all.'] })
    const { app } = await buildAvatarApp(t, { deps: { avatar: { llm, asr: createFakeAsrProvider({ text: 'a story' }), tts: createFakeTtsProvider() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-playing')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(1200)]))
    await client.waitFor(is('done'), 'done: everything sent')
    const from = client.frames.length
    await client.speakInRealTime(Buffer.concat([silencePcm(100), hm, silencePcm(100)]))
    await client.waitFor(is('paused'), 'paused', from)
    assert.deepEqual(await client.waitFor(is('interrupted'), 'interrupted', from), { type: 'interrupted', replyText: 'Once upon a time.' })
    assert.deepEqual(
      (await storedMessages(app, 'voice-playing', 2)).map((message) => message.content),
      ['a story', 'Once upon a time.'],
    )
    client.socket.close()
  })

  it('ends a turn with one error frame when recognition, synthesis or the model fails, storing nothing, and with the transcript alone when nothing was recognised', async (t) => {
    const cases = [
      { name: 'recognition', asr: createFakeAsrProvider({ fail: true }), tts: createFakeTtsProvider(), llm: createFakeLlm(), last: { type: 'error', message: 'Speech recognition failed: the fake recognizer was told to fail' } },
      { name: 'synthesis', asr: createFakeAsrProvider(), tts: createFakeTtsProvider({ fail: 'before' }), llm: createFakeLlm(), last: { type: 'error', message: 'Speech synthesis failed: The fake provider was told to fail' } },
      {
        name: 'model',
        asr: createFakeAsrProvider(),
        tts: createFakeTtsProvider(),
        llm: createFakeLlm({ pieces: ['Fine.', ' And', ' you'], failAfter: 2 }),
        last: { type: 'error', message: 'The language model stopped responding; the reply is incomplete.' },
      },
      { name: 'silence', asr: createFakeAsrProvider({ text: '  ' }), tts: createFakeTtsProvider(), llm: createFakeLlm(), last: { type: 'transcript', text: '', final: true } },
    ]
    for (const { name, asr, tts, llm, last } of cases) {
      const { app } = await buildAvatarApp(t, { deps: { avatar: { asr, tts, llm } } })
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      const client = await openClient(url, `voice-fail-${name}`)
      client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
      client.speak(Buffer.concat([silencePcm(200), hello, silencePcm(1200)]))
      await client.waitFor(is(last.type), `the end of the ${name} case`)
      // Nothing more comes for the turn: a typed turn's answer is the next thing on the socket.
      const from = client.frames.length
      client.send({ type: 'chat', userText: 'Still there?' })
      // (The failing model fails the typed turn too.)
      await client.waitFor((frame) => frame.type === 'done' || frame.type === 'error', 'the typed reply', from)
      const turn = client.frames.slice(client.frames.findIndex(is('vad', (frame) => frame.speaking === false)), from)
      assert.deepEqual(turn.at(-1), last, name)
      assert.ok(!turn.some((frame) => frame.type === 'done' || frame.type === 'interrupted'), name)
      // Nothing of the spoken turn is in the history.
      const messages = ((await app.inject({ method: 'GET', url: `/v1/session/voice-fail-${name}/history` })).json().messages ?? []) as Array<{ content: string }>
      assert.ok(!messages.some((message) => message.content === 'hello avatar'), name)
      client.socket.close()
    }
  })

  it('answers bad voice frames with error frames, and the socket stays open for chat', async (t) => {
    const { app } = await buildAvatarApp(t, { deps: { avatar: { asr: createFakeAsrProvider(), tts: createFakeTtsProvider(), llm: createFakeLlm() } } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-bad')
    const cases: Array<[unknown, string]> = [
      [Buffer.alloc(640), 'Audio frames need voice mode: send {"type":"voice.start","sampleRate":16000} first'],
      [{ type: 'voice.stop' }, 'Voice mode is not on'],
      [{ type: 'voice.start' }, 'sampleRate must be 16000 (16-bit PCM, 16 kHz, mono)'],
      [{ type: 'voice.start', sampleRate: 44100 }, 'sampleRate must be 16000 (16-bit PCM, 16 kHz, mono)'],
      [{ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 5 }, 'endOfTurnMs must be an integer from 100 to 3000'],
      [{ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 1e9 }, 'endOfTurnMs must be an integer from 100 to 3000'],
      [{ type: 'voice.start', sampleRate: 16000, endOfTurnMs: '500' }, 'endOfTurnMs must be an integer from 100 to 3000'],
      [{ type: 'voice.start', sampleRate: 16000, minSpeechMs: 12.5 }, 'minSpeechMs must be an integer from 100 to 1000'],
      [{ type: 'voice.start', sampleRate: 16000, voice: 'robot' }, /^Unknown voice "robot"; known voices: zh-CN-XiaoxiaoNeural/.source],
      [{ type: 'voice.start', sampleRate: 16000, meta: [1] }, 'meta must be a JSON object'],
      [{ type: 'voice.sing' }, 'Unknown message type: voice.sing'],
    ]
    for (const [frame, message] of cases) {
      const from = client.frames.length
      client.send(frame)
      const error = await client.waitFor(is('error'), `the error of ${JSON.stringify(frame)}`, from)
      if (message.startsWith('^')) assert.match(String(error.message), new RegExp(message))
      else assert.equal(error.message, message)
    }
    // Audio without voice mode is told once, not once per frame.
    const quiet = client.frames.length
    client.send(Buffer.alloc(640))
    client.send({ type: 'voice.start', sampleRate: 16000 })
    await client.waitFor(is('voice.started'), 'voice.started', quiet)
    assert.deepEqual(client.frames.slice(quiet).map((frame) => frame.type), ['voice.started'])

    const more: Array<[unknown, string]> = [
      [{ type: 'voice.start', sampleRate: 16000 }, 'Voice mode is already on; send voice.stop first'],
      [Buffer.alloc(641), 'Audio frames must be 16-bit PCM: an even number of bytes (got 641)'],
      [Buffer.alloc(32_002), 'Audio frames must be at most 32000 bytes (1 s of 16 kHz audio) and not empty; got 32002'],
      [Buffer.alloc(0), 'Audio frames must be at most 32000 bytes (1 s of 16 kHz audio) and not empty; got 0'],
    ]
    for (const [frame, message] of more) {
      const from = client.frames.length
      client.send(frame)
      assert.equal((await client.waitFor(is('error'), `the error of a ${Buffer.isBuffer(frame) ? `${frame.length}-byte frame` : JSON.stringify(frame)}`, from)).message, message)
    }
    const from = client.frames.length
    client.send({ type: 'chat', userText: 'Still there?' })
    await client.waitFor(is('done'), 'the typed reply', from)
    assert.equal(client.socket.readyState, WebSocket.OPEN)
    client.socket.close()
  })

  it('counts voice.start and each turn that reaches the model against the chat budget, not the audio frames', async (t) => {
    const asr = createFakeAsrProvider()
    const { app } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '3/min' }, deps: { avatar: { asr, tts: createFakeTtsProvider(), llm: createFakeLlm() } } })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(url, 'voice-budget')
    client.send({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 300 })
    const turn = Buffer.concat([silencePcm(200), hello, silencePcm(1200)])
    // voice.start, the first turn and a typed turn use the 3 of the minute; the audio frames (about 150 a turn) none.
    client.speak(turn)
    await client.waitFor(is('done'), 'the first spoken reply')
    let from = client.frames.length
    client.send({ type: 'chat', userText: 'typed' })
    await client.waitFor(is('done'), 'the typed reply', from)
    from = client.frames.length
    client.speak(turn)
    const refused = await client.waitFor(is('error'), 'the refused turn', from)
    assert.match(String(refused.message), /^Rate limit exceeded\. Try again in \d+ seconds\.$/)
    // Recognised (the transcript is sent), but no reply and nothing stored.
    assert.deepEqual(
      client.frames.slice(from).map((frame) => frame.type),
      ['vad', 'vad', 'transcript', 'error'],
    )
    client.socket.close()
  })

  it('refuses voice mode when no recogniser is configured, saying what to set', async (t) => {
    const { app } = await buildAvatarApp(t, {
      deps: { avatar: { asr: createFakeAsrProvider({ status: { provider: 'none', available: false, message: 'Speech recognition is not configured: set AVATAR_ASR_API_KEY' } }), tts: createFakeTtsProvider() } },
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, 'voice-none')
    client.send({ type: 'voice.start', sampleRate: 16000 })
    assert.deepEqual(await client.waitFor(is('error'), 'the refusal'), { type: 'error', message: 'Speech recognition is not configured: set AVATAR_ASR_API_KEY' })
    client.socket.close()
  })
})
