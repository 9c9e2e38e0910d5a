// Word error rate of voice mode's recognition on people's speech (issue 29, item 7's WER figure).
// Usage: node bench/avatar-voice-wer.ts [--smoke]   (needs apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata)
// The ten recordings of Debian's pocketsphinx-testdata (five LibriVox sentences, five card-game
// phrases) go through /ws in voice mode of a fresh `triad serve` (pocketsphinx, endOfTurnMs 800):
// the Silero turn cuts the utterance, pocketsphinx reads it. For comparison, the same recognizer on
// each whole file (what POST /v1/asr does). WER = word-level edit distance / reference words.
import { readFileSync } from 'node:fs'
import WebSocket from 'ws'
import { decodeWav, resample } from '../src/services/avatar/providers/asr/wav-decode.ts'
import { createPocketsphinxProvider } from '../src/services/avatar/providers/asr/index.ts'
import { framesOf, silencePcm } from '../test/services/avatar/voice/audio.ts'
import { smoke, startTriad } from './lib.ts'
import { editDistance, references, words } from './word-errors.ts'

function pcm16k(file: string): Buffer {
  const decoded = decodeWav(readFileSync(file))
  if (!decoded) throw new Error(`not a WAV: ${file}`)
  const samples = resample(decoded, 16_000)
  const out = Buffer.alloc(samples.length * 2)
  for (let index = 0; index < samples.length; index++) out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767), index * 2)
  return out
}

/** The transcripts of every turn voice mode makes of `pcm`, joined. */
async function throughVoiceMode(url: string, pcm: Buffer, session: string): Promise<string> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?session_id=${session}`)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const heard: string[] = []
  // Every turn (a `vad` speaking:false) ends with done, error, interrupted or an empty transcript.
  let turns = 0
  let ended = 0
  let stopped = false
  const finished = new Promise<void>((resolve, reject) => {
    const bound = setTimeout(() => reject(new Error(`turns did not end: ${ended}/${turns}`)), 120_000)
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { type: string; text?: string; speaking?: boolean }
      if (frame.type === 'transcript') heard.push(frame.text ?? '')
      if (frame.type === 'vad' && frame.speaking === false) turns++
      if (['done', 'error', 'interrupted'].includes(frame.type) || (frame.type === 'transcript' && !frame.text)) ended++
      if (frame.type === 'voice.stopped') stopped = true
      if (stopped && ended >= turns) {
        clearTimeout(bound)
        resolve()
      }
    })
  })
  socket.send(JSON.stringify({ type: 'voice.start', sampleRate: 16000, endOfTurnMs: 800 }))
  for (const frame of framesOf(Buffer.concat([silencePcm(500), pcm, silencePcm(1500)]))) socket.send(frame)
  socket.send(JSON.stringify({ type: 'voice.stop' }))
  await finished
  socket.close()
  return heard.join(' ')
}

// A smoke run reads one recording of each set.
const refs = smoke ? references().filter((_, index) => index === 0 || index === 5) : references()
const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx' })
const whole = createPocketsphinxProvider({ command: 'pocketsphinx_continuous', modelDir: '/usr/share/pocketsphinx/model/en-us', timeoutMs: 60_000 })
const totals = { words: 0, voice: 0, whole: 0 }
try {
  for (const [index, ref] of refs.entries()) {
    const pcm = pcm16k(ref.file)
    const voice = words(await throughVoiceMode(server.url, pcm, `wer-${index}`))
    const direct = words((await whole.transcribe({ audio: readFileSync(ref.file), filename: 'a.wav', mimeType: 'audio/wav', container: 'WAVE' })).text)
    const errors = { voice: editDistance(ref.words, voice), whole: editDistance(ref.words, direct) }
    totals.words += ref.words.length
    totals.voice += errors.voice
    totals.whole += errors.whole
    console.log(`${ref.file.split('/').slice(-2).join('/').padEnd(60)} voice ${errors.voice}/${ref.words.length} "${voice.join(' ')}"  whole file ${errors.whole}/${ref.words.length}`)
  }
  console.log(`\nWER over ${refs.length} recordings (${totals.words} words): voice mode ${((100 * totals.voice) / totals.words).toFixed(1)} %, whole files ${((100 * totals.whole) / totals.words).toFixed(1)} %`)
} finally {
  await server.stop()
}
