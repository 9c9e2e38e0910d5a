import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { before, describe, it } from 'node:test'
import { decodeWav, resample } from '../../../../src/services/avatar/providers/asr/wav-decode.ts'
import { createSileroTurnDetector, type TurnDetectorOptions } from '../../../../src/services/avatar/modules/voice/turn-detector.ts'
import { engineIndependent } from '../../../helpers/build-app.ts'
import { silencePcm, speechPcm } from './audio.ts'

function floats(pcm: Buffer): Float32Array {
  const out = new Float32Array(pcm.length / 2)
  for (let index = 0; index < out.length; index++) out[index] = pcm.readInt16LE(index * 2) / 32768
  return out
}

async function detect(audio: Buffer, options: Partial<TurnDetectorOptions>, finish: 'end' | 'close' = 'close') {
  const events: string[] = []
  const turns: Float32Array[] = []
  const detector = await createSileroTurnDetector({
    endOfTurnMs: 300,
    minSpeechMs: 250,
    maxUtteranceMs: 30_000,
    onSpeech: () => events.push('speech'),
    onTurn: (turn) => {
      events.push('turn')
      turns.push(turn)
    },
    onSilence: () => events.push('silence'),
    ...options,
  })
  // In uneven pieces, as a socket delivers them: frames of 32 ms are cut across pieces.
  const samples = floats(audio)
  for (let offset = 0; offset < samples.length; offset += 333) await detector.push(samples.subarray(offset, offset + 333))
  if (finish === 'end') await detector.end()
  await detector.close()
  return { events, turns }
}

/** Debian's pocketsphinx-testdata: five LibriVox sentences read by a person (16 kHz WAV). */
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox'

describe('the Silero turn detector', { skip: engineIndependent }, () => {
  let hello: Buffer
  before(async () => {
    ;[hello] = await speechPcm(['Hello avatar, how are you today?'])
  })

  it('makes one turn of an utterance, with its audio', async () => {
    const { events, turns } = await detect(Buffer.concat([silencePcm(300), hello, silencePcm(1500)]), {})
    assert.deepEqual(events, ['speech', 'turn'])
    const seconds = turns[0].length / 16000
    // The speech, with up to 320 ms before it (the onset of a first word is quiet) and the end-of-turn silence after it.
    assert.ok(seconds > hello.length / 32000 - 0.3 && seconds < hello.length / 32000 + 1, `turn of ${seconds} s`)
  })

  it(
    'makes one turn of each sentence a person reads (LibriVox recordings), covering it',
    { skip: !existsSync(LIBRIVOX) && 'Debian\'s pocketsphinx-testdata is not installed (apt-get install pocketsphinx-testdata)' },
    async () => {
      const files = readdirSync(LIBRIVOX).filter((name) => name.endsWith('.wav'))
      assert.equal(files.length, 5)
      for (const name of files) {
        const decoded = decodeWav(readFileSync(`${LIBRIVOX}/${name}`))
        assert.ok(decoded, name)
        const samples = resample(decoded, 16000)
        const pcm = Buffer.alloc(samples.length * 2)
        for (let index = 0; index < samples.length; index++) pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767), index * 2)
        // A reader's pauses between clauses are under 0.8 s.
        const { events, turns } = await detect(Buffer.concat([silencePcm(500), pcm, silencePcm(1500)]), { endOfTurnMs: 800 })
        assert.deepEqual(events, ['speech', 'turn'], name)
        const covered = turns[0].length / samples.length
        assert.ok(covered > 0.9 && covered < 1.3, `${name}: the turn holds ${covered} of the recording`)
      }
    },
  )

  it('ends an utterance that goes on past the limit without waiting for a pause', async () => {
    // 3 s of silence would end the turn; the pauses between the sentences are shorter.
    const talk = Buffer.concat([hello, hello, hello])
    const { events, turns } = await detect(Buffer.concat([silencePcm(300), talk]), { maxUtteranceMs: 2000, endOfTurnMs: 3000 })
    assert.ok(events.filter((event) => event === 'turn').length >= 2, events.join())
    // 2 s from the start of speech, plus the 320 ms kept before it.
    assert.ok(turns.every((turn) => turn.length / 16000 <= 2.4), turns.map((turn) => turn.length / 16000).join())
  })

  it('tells the first speech frame, a pause of pauseMs inside the turn, speech resuming after it, and the pause that ends the turn', async () => {
    const at: Record<string, number[]> = {}
    const note = (name: string) => (atMs: number) => (at[name] ??= []).push(atMs)
    const audio = Buffer.concat([silencePcm(300), hello, silencePcm(250), hello, silencePcm(1000)])
    const { events } = await detect(audio, {
      endOfTurnMs: 400,
      pauseMs: 200,
      onSpeechStart: note('start'),
      onPause: note('pause'),
      onSpeechResumed: note('resumed'),
      onTurn: (_turn, atMs) => note('turn')(atMs),
    })
    assert.deepEqual(events, ['speech'])
    // One speech start, before the speech is confirmed; a pause in the 250 ms gap that speech
    // then ends, and the last pause 200 ms into the final silence, 200 ms before the turn ends.
    assert.equal(at.start?.length, 1)
    assert.ok(at.start[0] >= 300 && at.start[0] < 600, `speech started at ${at.start}`)
    assert.equal(at.resumed?.length, (at.pause?.length ?? 0) - 1, JSON.stringify(at))
    const lastPause = at.pause.at(-1) ?? 0
    assert.equal(at.turn?.length, 1)
    assert.ok(Math.abs(at.turn[0] - lastPause - 200) <= 32, `paused at ${lastPause}, turn at ${at.turn}`)
    // (32 bytes of 16 kHz 16-bit audio a millisecond.)
    const gapStart = 300 + hello.length / 32
    assert.ok(at.pause.some((ms) => ms > gapStart && ms < gapStart + 350), `a pause in the gap from ${gapStart} ms: ${at.pause}`)
  })

  it('makes a turn of speech cut short by end() (push-to-talk released), and none on close()', async () => {
    const cut = Buffer.concat([silencePcm(300), hello])
    assert.deepEqual((await detect(cut, {}, 'end')).events, ['speech', 'turn'])
    assert.deepEqual((await detect(cut, {}, 'close')).events, ['speech'])
  })
})
