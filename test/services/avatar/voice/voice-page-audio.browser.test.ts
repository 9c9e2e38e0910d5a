import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromiumSkipReason, launchChromium, openCheckedPage } from '../../../helpers/browser.ts'
import { buildTestApp, engineIndependent } from '../../../helpers/build-app.ts'
import { AUDIO_PROBE, type SourceStart } from './browser-voice.ts'

// The page's reply audio without a microphone: the WAV reader that skips decodeAudioData, and
// the playback of voice mode paused and resumed where it stopped (voice-playback.js), watched by
// wrapping AudioBufferSourceNode before the page's code runs.
const skip = engineIndependent || chromiumSkipReason()

interface Observed {
  [key: string]: unknown
}

describe('the avatar page plays voice replies, in Chromium', { skip }, () => {
  it('reads 16-bit PCM WAVs into the same samples decodeAudioData gives, at their own rate, also with a streaming size or chunks before the data; other encodings are left to decodeAudioData', async (t) => {
    const browser = await launchChromium()
    t.after(() => browser.close())
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0', AVATAR_TTS_THREADS: '1' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const { page } = await openCheckedPage(t, browser, { stepTimeoutMs: 60_000 })
    await page.goto(`${base}/avatar`)
    // Runs in the page: an espeak-ng sentence as the server streams it (POST /v1/tts, WAV), read
    // both ways, then variants of its header.
    const observed = (await page.evaluate(`(async () => {
      const { pcmWavToAudioBuffer, readPcmWav } = await import('/avatar/assets/wav-pcm.js')
      const response = await fetch('/v1/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Papa is here.', format: 'wav' }) })
      const wav = await response.arrayBuffer()
      const view = new DataView(wav)
      const context = new AudioContext()
      const offline = new OfflineAudioContext(1, 1, 22050)
      // Each way ten times, timed (the figure is a diagnostic, not a check).
      let started = performance.now()
      for (let round = 0; round < 10; round++) pcmWavToAudioBuffer(context, wav)
      const directMs = (performance.now() - started) / 10
      started = performance.now()
      for (let round = 0; round < 10; round++) await context.decodeAudioData(wav.slice(0))
      const decodeMs = (performance.now() - started) / 10
      const direct = pcmWavToAudioBuffer(context, wav)
      const decoded = await offline.decodeAudioData(wav.slice(0))
      let maxDifference = 0
      const a = direct.getChannelData(0)
      const b = decoded.getChannelData(0)
      for (let index = 0; index < Math.min(a.length, b.length); index++) maxDifference = Math.max(maxDifference, Math.abs(a[index] - b[index]))
      let peak = 0
      for (const sample of a) peak = Math.max(peak, Math.abs(sample))
      // The same file with the data size a streaming writer puts there, and with a LIST chunk (odd-sized, padded) before the data.
      const streaming = wav.slice(0)
      new DataView(streaming).setUint32(40, 0xffffffff - 36, true)
      const list = new Uint8Array(wav.byteLength + 14)
      list.set(new Uint8Array(wav, 0, 36))
      list.set([0x4c, 0x49, 0x53, 0x54, 5, 0, 0, 0, 0x49, 0x4e, 0x46, 0x4f, 0x21, 0], 36)
      list.set(new Uint8Array(wav, 36), 50)
      // 32-bit float samples (format 3): not for this reader.
      const float = wav.slice(0)
      new DataView(float).setUint16(20, 3, true)
      new DataView(float).setUint16(34, 32, true)
      const withList = pcmWavToAudioBuffer(context, list.buffer)
      return {
        headerDataSize: view.getUint32(40, true), directMs, decodeMs,
        rate: direct.sampleRate, length: direct.length, channels: direct.numberOfChannels,
        decodedLength: decoded.length, maxDifference, peak,
        dataBytes: wav.byteLength - 44,
        streamingLength: pcmWavToAudioBuffer(context, streaming).length,
        listLength: withList.length, listEqual: withList.getChannelData(0).every((sample, index) => sample === a[index]),
        float: readPcmWav(float), notWav: readPcmWav(new TextEncoder().encode('not a wav at all').buffer),
      }
    })()`)) as Observed
    t.diagnostic(JSON.stringify(observed))
    assert.equal(observed.rate, 22050)
    assert.equal(observed.channels, 1)
    assert.equal(observed.length, Number(observed.dataBytes) / 2)
    assert.equal(observed.decodedLength, observed.length)
    assert.ok(Number(observed.peak) > 0.05, 'real speech, not silence')
    assert.ok(Number(observed.maxDifference) <= 1 / 32768, `samples differ by up to ${observed.maxDifference}`)
    assert.equal(observed.streamingLength, observed.length)
    assert.equal(observed.listLength, observed.length)
    assert.equal(observed.listEqual, true)
    assert.equal(observed.float, null)
    assert.equal(observed.notWav, null)
  })

  it('pauses the sentences where they are and resumes them from that sample, back to back; the mouth rests while paused; stop drops what is held', async (t) => {
    const browser = await launchChromium(['--autoplay-policy=no-user-gesture-required'])
    t.after(() => browser.close())
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0', AVATAR_TTS_THREADS: '1' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const { context, page } = await openCheckedPage(t, browser, { stepTimeoutMs: 60_000 })
    await context.addInitScript(AUDIO_PROBE)
    await page.goto(`${base}/avatar`)
    const observed = (await page.evaluate(`(async () => {
      const { createVoicePlayback } = await import('/avatar/assets/voice-playback.js')
      const context = new AudioContext()
      await context.resume()
      const sentence = async (text) => {
        const response = await fetch('/v1/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, format: 'wav', visemes: true }) })
        const body = await response.json()
        return { audio: body.audio, visemes: body.visemes }
      }
      const first = await sentence('Once upon a time, there was a quiet little village.')
      const second = await sentence('Everyone there knew everyone else.')
      const speaking = []
      let played = 0
      const playback = createVoicePlayback({ context: () => context, onSpeaking: (on) => speaking.push(on), onPlayed: () => played++ })
      const until = async (test) => { for (let tries = 0; tries < 1000 && !test(); tries++) await new Promise((resolve) => setTimeout(resolve, 10)) }
      const starts = [await playback.add(first), await playback.add(second)]
      await until(() => context.currentTime >= starts[0] + 0.4)
      const visemes = [playback.viseme()]
      const pause = playback.pause()
      visemes.push(playback.viseme())
      // Audio that arrives while paused is held.
      const held = await playback.add(second)
      await until(() => context.currentTime >= pause.at + 0.3)
      visemes.push(playback.viseme())
      const again = playback.resume()
      await until(() => played >= 3 || context.currentTime > again + 30)
      const afterResume = { played, speaking: [...speaking], sources: window.audioSources.length }
      // Dropped: scheduled and held alike.
      await playback.add(first)
      const pausedAgain = playback.pause()
      await playback.add(second)
      const stop = playback.stop()
      return { starts, pause, held: held === undefined, again, visemes, afterResume, pausedAgain, stop, active: playback.active, sources: window.audioSources }
    })()`)) as {
      starts: number[]
      pause: { at: number; sounding: boolean }
      held: boolean
      again: number
      visemes: Array<string | undefined>
      afterResume: { played: number; speaking: boolean[]; sources: number }
      pausedAgain: { at: number; sounding: boolean }
      stop: { at: number; sounding: boolean }
      active: boolean
      sources: SourceStart[]
    }
    t.diagnostic(JSON.stringify({ ...observed, sources: undefined }))
    const [one, two, oneAgain, twoAgain, heldAgain] = observed.sources
    // Back to back from the start: the second sentence begins where the first ends.
    assert.equal(one.when, observed.starts[0])
    assert.ok(Math.abs(two.when - (one.when + one.length)) < 1e-9)
    // Paused while the first was sounding; both stopped at that instant, the mouth at rest.
    assert.equal(observed.pause.sounding, true)
    // (The probe reads the clock again as the page stops each source: it may have moved a render quantum or so.)
    assert.ok(Math.abs(Number(one.stoppedAt) - observed.pause.at) < 0.05)
    assert.ok(Math.abs(Number(two.stoppedAt) - observed.pause.at) < 0.05)
    assert.notEqual(observed.visemes[0], undefined)
    assert.deepEqual(observed.visemes.slice(1), ['sil', 'sil'])
    assert.equal(observed.held, true)
    // Resumed: the first from the sample it stopped at, the rest back to back after it, nothing lost or repeated.
    assert.equal(oneAgain.when, observed.again)
    assert.ok(Math.abs(oneAgain.offset - (observed.pause.at - one.when)) < 1e-9, `resumed at ${oneAgain.offset}, stopped after ${observed.pause.at - one.when}`)
    assert.ok(oneAgain.offset > 0.35)
    assert.equal(twoAgain.offset, 0)
    assert.ok(Math.abs(twoAgain.when - (oneAgain.when + oneAgain.length - oneAgain.offset)) < 1e-9)
    assert.ok(Math.abs(heldAgain.when - (twoAgain.when + twoAgain.length)) < 1e-9)
    assert.equal(observed.afterResume.played, 3)
    assert.equal(observed.afterResume.speaking.at(-1), false)
    assert.equal(observed.afterResume.sources, 5)
    // stop drops what plays and what is held: every source started since is stopped, nothing left.
    assert.equal(observed.active, false)
    assert.ok(observed.sources.slice(5).length >= 1)
    for (const source of observed.sources.slice(5)) assert.ok(Math.abs(Number(source.stoppedAt) - observed.pausedAgain.at) < 0.05)
  })
})
