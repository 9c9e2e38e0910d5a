import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { createSileroTurnDetector, type TurnDetectorOptions } from '../../../../src/services/avatar/modules/voice/turn-detector.ts'
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

describe('the Silero turn detector', () => {
  let hello: Buffer
  before(async () => {
    ;[hello] = await speechPcm(['Hello avatar, how are you today?'])
  })

  it('makes one turn of an utterance, with its audio', async () => {
    const { events, turns } = await detect(Buffer.concat([silencePcm(300), hello, silencePcm(1500)]), {})
    assert.deepEqual(events, ['speech', 'turn'])
    const seconds = turns[0].length / 16000
    assert.ok(Math.abs(seconds - hello.length / 32000) < 0.8, `turn of ${seconds} s`)
  })

  it('ends an utterance that goes on past the limit without waiting for a pause', async () => {
    // 3 s of silence would end the turn; the pauses between the sentences are shorter.
    const talk = Buffer.concat([hello, hello, hello])
    const { events, turns } = await detect(Buffer.concat([silencePcm(300), talk]), { maxUtteranceMs: 2000, endOfTurnMs: 3000 })
    assert.ok(events.filter((event) => event === 'turn').length >= 2, events.join())
    assert.ok(turns.every((turn) => turn.length / 16000 <= 2.2), turns.map((turn) => turn.length / 16000).join())
  })

  it('makes a turn of speech cut short by end() (push-to-talk released), and none on close()', async () => {
    const cut = Buffer.concat([silencePcm(300), hello])
    assert.deepEqual((await detect(cut, {}, 'end')).events, ['speech', 'turn'])
    assert.deepEqual((await detect(cut, {}, 'close')).events, ['speech'])
  })
})
