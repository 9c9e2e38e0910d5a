// Voice mode latency on the server side (issue 29, a first look at item 7).
// Usage: node bench/avatar-voice.ts [--repeats 3 --end-of-turn 200 --conversations 20 --smoke]
// A fresh `triad serve` (avatar only, mock model, pocketsphinx, espeak-ng) gets espeak-ng speech
// resampled to 16 kHz over /ws in voice mode, paced in real time (a 20 ms frame every 20 ms, then
// silence), as a microphone would send it. Measured on this client's clock, from the moment the
// frame holding the last audible sample of the utterance was sent: the end of turn (`vad`
// speaking:false), the transcript, the first token, and the first `audio` frame (the first reply
// sample the page could play), and each stage alone. Then barge-in: speech over a reply that is still being spoken, from
// its onset to `vad` and `interrupted`. Then many at once (item 8): `--conversations` sockets
// talking at the same time, two turns each: the latency, whether each audio chunk arrived before
// the one ahead of it had finished playing (a client that plays them back to back hears no gap),
// and the server's memory per conversation. Not the browser measurement of item 7
// (bench/avatar-voice-browser.ts): no page, no playback.
import { readFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import WebSocket from 'ws'
import { framesOf, silencePcm, speechPcm } from '../test/services/avatar/voice/audio.ts'
import { smoke, startTriad } from './lib.ts'

const { values } = parseArgs({
  options: {
    repeats: { type: 'string', default: '3' },
    'end-of-turn': { type: 'string', default: '200' },
    conversations: { type: 'string', default: '20' },
    smoke: { type: 'boolean', default: false },
  },
})
const repeats = smoke ? 1 : Number(values.repeats)
const endOfTurnMs = Number(values['end-of-turn'])
const PHRASES = ['What is the weather like today?', 'Hello avatar, how are you?', 'Tell me a story about a dog.']
const FRAME_MS = 20

/** The index of the 20 ms frame holding the last sample louder than −40 dBFS. */
function lastAudibleFrame(pcm: Buffer): number {
  for (let sample = pcm.length / 2 - 1; sample >= 0; sample--) if (Math.abs(pcm.readInt16LE(sample * 2)) > 328) return Math.floor(sample / (16 * FRAME_MS))
  return 0
}

interface Turn {
  endOfTurn: number
  transcript: number
  firstToken: number
  firstAudio: number
  partials: number
  text: string
}

async function oneTurn(url: string, speech: Buffer, session: string): Promise<Turn | string> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?session_id=${session}`)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const seen: Record<string, number> = {}
  let text = ''
  let partials = 0
  let spokeAt = Number.NaN
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; speaking?: boolean; text?: string; final?: boolean }
    const now = performance.now()
    const key = frame.type === 'vad' ? `vad:${frame.speaking}` : frame.type === 'transcript' ? `transcript:${frame.final}` : frame.type
    seen[key] ??= now
    if (frame.type === 'transcript' && frame.final === false) partials++
    if (frame.type === 'transcript' && frame.final) text = frame.text ?? ''
  })
  socket.send(JSON.stringify({ type: 'voice.start', sampleRate: 16000, endOfTurnMs }))
  const frames = framesOf(Buffer.concat([silencePcm(300), speech]))
  const last = lastAudibleFrame(Buffer.concat([silencePcm(300), speech]))
  const silence = silencePcm(FRAME_MS)
  const start = performance.now()
  // Real time: frame i leaves at start + 20 ms × i; silence follows until the first audio (10 s at most).
  for (let index = 0; index < frames.length + 500 && seen.audio === undefined && seen.error === undefined; index++) {
    const due = start + index * FRAME_MS
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    socket.send(index < frames.length ? frames[index] : silence)
    if (index === last) spokeAt = performance.now()
  }
  socket.close()
  if (seen.audio === undefined) return `no reply audio within 10 s of silence: ${JSON.stringify(seen)}`
  return {
    endOfTurn: seen['vad:false'] - spokeAt,
    transcript: seen['transcript:true'] - spokeAt,
    firstToken: seen.token - spokeAt,
    firstAudio: seen.audio - spokeAt,
    partials,
    text,
  }
}

/**
 * Barge-in: once the first sentence of a reply has arrived, the person speaks again (real time).
 * From the send of the frame holding the first audible sample of that speech: `paused` (the
 * first frame heard as speech: the page stops playing), `vad` speaking:true (the detector needs
 * minSpeechMs of speech, 250 ms by default) and `interrupted`. Undefined when
 * the reply had ended (done) before the speech was heard.
 */
async function oneBargeIn(url: string, speech: Buffer, again: Buffer, session: string): Promise<{ paused: number; heard: number; interrupted: number } | undefined> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?session_id=${session}`)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const seen: Record<string, number> = {}
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; speaking?: boolean }
    const key = frame.type === 'vad' ? `vad:${frame.speaking}` : frame.type
    const now = performance.now()
    if (seen.audio !== undefined && key === 'vad:true') seen.bargeVad ??= now
    seen[key] ??= now
  })
  socket.send(JSON.stringify({ type: 'voice.start', sampleRate: 16000, endOfTurnMs }))
  const first = framesOf(Buffer.concat([silencePcm(300), speech]))
  const second = framesOf(again)
  const onset = second.findIndex((frame) => frame.some((_, index) => index % 2 === 1 && Math.abs(frame.readInt16LE(index - 1)) > 328))
  const silence = silencePcm(FRAME_MS)
  let phase: 'speaking' | 'waiting' | 'again' = 'speaking'
  let againIndex = 0
  let onsetAt = Number.NaN
  const start = performance.now()
  for (let index = 0; index < first.length + 800 && seen.interrupted === undefined && seen.done === undefined; index++) {
    const wait = start + index * FRAME_MS - performance.now()
    if (wait > 0) await sleep(wait)
    if (phase === 'speaking' && index >= first.length) phase = 'waiting'
    if (phase === 'waiting' && seen.audio !== undefined) phase = 'again'
    if (phase === 'speaking') socket.send(first[index])
    else if (phase === 'again' && againIndex < second.length) {
      socket.send(second[againIndex])
      if (againIndex === onset) onsetAt = performance.now()
      againIndex++
    } else socket.send(silence)
  }
  socket.close()
  if (seen.interrupted === undefined) return undefined
  return { paused: seen.paused - onsetAt, heard: seen.bargeVad - onsetAt, interrupted: seen.interrupted - onsetAt }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

/** Turns over a fresh instance with `env`, reported per stage; the voice-to-first-audio times. */
async function measure(key: string, label: string, env: Record<string, string>): Promise<number[]> {
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx', ...env })
  try {
    const speech = await speechPcm(PHRASES)
    const turns: Turn[] = []
    let missed = 0
    for (let round = 0; round < repeats; round++) {
      for (const [index, pcm] of speech.entries()) {
        const turn = await oneTurn(server.url, pcm, `bench-voice-${key}-${round}-${index}`)
        if (typeof turn === 'string') {
          missed++
          console.log(`${PHRASES[index].padEnd(34)} ${turn}`)
          continue
        }
        turns.push(turn)
        console.log(
          `${PHRASES[index].padEnd(34)} heard ${JSON.stringify(turn.text).padEnd(40)} (${turn.partials} partials) end of turn ${turn.endOfTurn.toFixed(0)} ms, transcript ${turn.transcript.toFixed(0)}, first token ${turn.firstToken.toFixed(0)}, first audio ${turn.firstAudio.toFixed(0)}`,
        )
      }
    }
    console.log(`\n${label}: voice-to-first-audio over ${turns.length} turns (${missed} without a reply in time), endOfTurnMs ${endOfTurnMs} (ms after the last audible sample was sent):`)
    for (const stage of ['endOfTurn', 'transcript', 'firstToken', 'firstAudio'] as const) {
      const values = turns.map((turn) => turn[stage])
      console.log(`  ${stage.padEnd(11)} p50 ${quantile(values, 0.5).toFixed(0).padStart(5)}  p95 ${quantile(values, 0.95).toFixed(0).padStart(5)}`)
    }
    // Each stage alone: the time from the end of the one before it.
    const stages = {
      'end-of-turn detection': (turn: Turn) => turn.endOfTurn,
      'recognition (final transcript)': (turn: Turn) => turn.transcript - turn.endOfTurn,
      'model first token': (turn: Turn) => turn.firstToken - turn.transcript,
      'first sentence synthesised and sent': (turn: Turn) => turn.firstAudio - turn.firstToken,
    }
    console.log('per stage:')
    for (const [stage, of] of Object.entries(stages)) {
      const values = turns.map(of)
      console.log(`  ${stage.padEnd(36)} p50 ${quantile(values, 0.5).toFixed(0).padStart(5)}  p95 ${quantile(values, 0.95).toFixed(0).padStart(5)}`)
    }
    return turns.map((turn) => turn.firstAudio)
  } finally {
    await server.stop()
  }
}

console.log(`load average at the start: ${loadavg().map((load) => load.toFixed(1)).join(' ')} (on ${availableParallelism()} cores)`)
// The baseline of the same run: one pocketsphinx_continuous process per turn, at its end.
const streaming = await measure('resident', 'resident decoder, preemptive replies (the defaults)', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'true', AVATAR_VOICE_PREEMPTIVE: 'true' })
const atEnd = await measure('at-end', 'baseline: resident decoder, the reply started at the end of the turn', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'true', AVATAR_VOICE_PREEMPTIVE: 'false' })
const batch = await measure('process', 'baseline: pocketsphinx_continuous per turn', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'false', AVATAR_VOICE_PREEMPTIVE: 'false' })
console.log(`load average at the end: ${loadavg().map((load) => load.toFixed(1)).join(' ')}`)
const ratio = (name: string, of: number[], to: number[]) =>
  console.log(`voice-to-first-audio, ${name}: p50 ${(quantile(of, 0.5) / quantile(to, 0.5)).toFixed(2)}, p95 ${(quantile(of, 0.95) / quantile(to, 0.95)).toFixed(2)}`)
ratio('preemptive / started at the end of the turn', streaming, atEnd)
ratio('preemptive / per-turn process', streaming, batch)
console.log()

// Barge-in needs a reply still being spoken when the person speaks again: the mock writes slowly here.
const slow = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx', AVATAR_MOCK_TOKEN_DELAY: '300ms' })
try {
  const [speech, again] = await speechPcm(['Hello avatar, how are you today?', 'Wait, stop please.'])
  const stops: Array<{ paused: number; heard: number; interrupted: number }> = []
  for (let round = 0; round < (smoke ? 1 : repeats * 3); round++) {
    const stop = await oneBargeIn(slow.url, speech, again, `bench-barge-${round}`)
    if (stop) stops.push(stop)
    console.log(
      stop
        ? `barge-in: paused ${stop.paused.toFixed(0)} ms after the onset of the speech, speech confirmed ${stop.heard.toFixed(0)} ms, interrupted ${stop.interrupted.toFixed(0)} ms`
        : 'barge-in: the reply had ended first',
    )
  }
  if (stops.length > 0) {
    console.log(`\nbarge-in over ${stops.length} (ms after the onset of the speech over the reply; minSpeechMs 250):`)
    for (const stage of ['paused', 'heard', 'interrupted'] as const) {
      const values = stops.map((stop) => stop[stage])
      console.log(`  ${stage.padEnd(11)} p50 ${quantile(values, 0.5).toFixed(0).padStart(5)}  p95 ${quantile(values, 0.95).toFixed(0).padStart(5)}`)
    }
  }
} finally {
  await slow.stop()
}

/** The server's resident memory, from /proc (bytes). */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) * 1024 : 0
}

interface Conversation {
  firstAudio: number[]
  chunks: number
  late: number
  worstLateMs: number
}

/**
 * One conversation of `turns` turns in real time. Each reply is played back to back as it
 * arrives: a chunk is late when it arrives after the one before it has finished playing.
 */
async function converse(url: string, speech: Buffer[], session: string, turns: number): Promise<Conversation> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?session_id=${session}`)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const result: Conversation = { firstAudio: [], chunks: 0, late: 0, worstLateMs: 0 }
  const reply = { done: false }
  let spokeAt = Number.NaN
  let playingUntil = 0
  let firstOfReply = true
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; durationMs?: number }
    const now = performance.now()
    if (frame.type === 'audio') {
      result.chunks++
      if (firstOfReply) {
        result.firstAudio.push(now - spokeAt)
        playingUntil = now
        firstOfReply = false
      } else if (now > playingUntil) {
        result.late++
        result.worstLateMs = Math.max(result.worstLateMs, now - playingUntil)
        playingUntil = now
      }
      playingUntil += frame.durationMs ?? 0
    }
    if (frame.type === 'done' || frame.type === 'error' || frame.type === 'interrupted') reply.done = true
  })
  socket.send(JSON.stringify({ type: 'voice.start', sampleRate: 16000, endOfTurnMs }))
  const silence = silencePcm(FRAME_MS)
  for (let turn = 0; turn < turns; turn++) {
    const pcm = Buffer.concat([silencePcm(300), speech[turn % speech.length]])
    const frames = framesOf(pcm)
    const last = lastAudibleFrame(pcm)
    reply.done = false
    firstOfReply = true
    const start = performance.now()
    // Speak, then stay quiet until the reply is done and has been heard (30 s at most).
    for (let index = 0; index < frames.length + 1500; index++) {
      if (index >= frames.length && reply.done && performance.now() >= playingUntil) break
      const wait = start + index * FRAME_MS - performance.now()
      if (wait > 0) await sleep(wait)
      socket.send(index < frames.length ? frames[index] : silence)
      if (index === last) spokeAt = performance.now()
    }
  }
  socket.close()
  return result
}

{
  const count = smoke ? 3 : Number(values.conversations)
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx' })
  try {
    const speech = await speechPcm(PHRASES)
    // One conversation first: the decoders and the synthesis threads are loaded before the baseline memory is read.
    await converse(server.url, speech, 'bench-many-warm', 1)
    const baseline = rssOf(server.pid)
    let peak = baseline
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 200)
    // People do not all start at once: each starts up to 2 s after the first.
    const conversations = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        await sleep((index * 2000) / count)
        return converse(server.url, speech, `bench-many-${index}`, 2)
      }),
    )
    clearInterval(sampler)
    const latencies = conversations.flatMap((conversation) => conversation.firstAudio)
    const chunks = conversations.reduce((sum, conversation) => sum + conversation.chunks, 0)
    const late = conversations.reduce((sum, conversation) => sum + conversation.late, 0)
    const worst = Math.max(...conversations.map((conversation) => conversation.worstLateMs))
    console.log(`\n${count} conversations at once, 2 turns each (${latencies.length} replies), endOfTurnMs ${endOfTurnMs}, ${loadavg()[0].toFixed(1)} load at the end:`)
    console.log(`  voice-to-first-audio p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms`)
    console.log(`  audio chunks ${chunks}, arrived after the one ahead had finished playing: ${late}${late > 0 ? ` (worst ${worst.toFixed(0)} ms)` : ''}`)
    console.log(`  server memory: ${(baseline / 2 ** 20).toFixed(0)} MB with one conversation done, peak ${(peak / 2 ** 20).toFixed(0)} MB: ${((peak - baseline) / count / 2 ** 20).toFixed(1)} MB per conversation`)
  } finally {
    await server.stop()
  }
}
