// Voice-to-voice latency and barge-in in a real browser (issue 29, item 7).
// Usage: node bench/avatar-voice-browser.ts [--repeats 2 --end-of-turn 200 --smoke]
//   (needs Chromium, pocketsphinx, pocketsphinx-en-us and pocketsphinx-testdata)
// Chromium's fake microphone speaks the five LibriVox sentences of pocketsphinx-testdata (5 s of
// silence after each) to the /avatar page in hands-free voice mode, on a fresh `triad serve`
// (avatar only, mock model, pocketsphinx, espeak-ng). Everything is read on the page's
// AudioContext clock (voice.js): the end of the person's speech in the file (the last 10 ms
// within 20 dB of the recording's loudest, placed on the page's clock by a beep the file starts
// with), the arrival of vad speaking:false, of the final transcript, of the first token
// and of the first audio frame, and the time the page scheduled the first reply sample to play.
// A turn that ended at a pause inside a recording (Silero heard 200 ms of silence there) has no
// speech end in the file to measure from: it is counted, not timed. The baselines of the same run: the
// reply started at the end of the turn instead of at the pause (AVATAR_VOICE_PREEMPTIVE=false), and
// the per-turn pocketsphinx_continuous process (AVATAR_ASR_POCKETSPHINX_STREAMING=false).
// Barge-in: a second microphone file says each recording and, 1.5 s after its speech ends (while
// the mock's reply plays), the next one over the reply. The figure is on the page's clock, from
// the onset of the speech over the reply in the file (the first 10 ms within 20 dB of the
// recording's loudest) to the moment the page stopped playback (the server's `paused`, sent at
// Silero's first speech frame). Only stops of a reply that was sounding are timed; the others
// (the reply not yet started, or already over) are counted.
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import {
  fakeMicrophoneWav,
  launchWithMicrophone,
  librivoxRecordings,
  measuredTurns,
  type PageTurn,
  recordingSamples,
  speechBounds,
  speechEndsOnPage,
  speechStartsOnPage,
  startTalking,
} from '../test/services/avatar/voice/browser-voice.ts'
import { smoke, startTriad } from './lib.ts'

const { values } = parseArgs({
  options: { repeats: { type: 'string', default: '2' }, 'end-of-turn': { type: 'string', default: '200' }, smoke: { type: 'boolean', default: false } },
})
const repeats = smoke ? 1 : Number(values.repeats)
const endOfTurnMs = Number(values['end-of-turn'])
const recordings = librivoxRecordings().slice(0, smoke ? 1 : undefined)
const dir = mkdtempSync(join(tmpdir(), 'triad-voice-browser-'))
const microphone = fakeMicrophoneWav(
  recordings.map((recording) => recording.file),
  join(dir, 'microphone.wav'),
  { leadSeconds: 2, gapSeconds: 5 },
)

// Each recording, then the next one starting 1.5 s after its speech ends, then 5 s of silence.
const OVERLAP_AFTER_SECONDS = 1.5
const bargeParts = recordings.flatMap((recording, index) => {
  const next = librivoxRecordings()[(index + 1) % 5]
  const own = recordingSamples(recording.file)
  const tail = own.length / 16_000 - speechBounds(own).end
  const lead = speechBounds(recordingSamples(next.file)).start
  return [
    { file: recording.file, gapSeconds: Math.max(0.1, OVERLAP_AFTER_SECONDS - tail - lead) },
    { file: next.file, gapSeconds: 5 },
  ]
})
const bargeMicrophone = fakeMicrophoneWav(bargeParts, join(dir, 'barge-in.wav'), { leadSeconds: 2, gapSeconds: 5 })

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

type TimedTurn = PageTurn & { speechEnd: number }

const STAGES: Record<string, (turn: TimedTurn) => number> = {
  'end-of-turn detection': (turn) => turn.endOfTurn - turn.speechEnd,
  'recognition (final transcript)': (turn) => turn.transcript - turn.endOfTurn,
  'model first token': (turn) => turn.firstToken - turn.transcript,
  'first sentence synthesised + transport': (turn) => turn.audioArrived - turn.firstToken,
  'playback start (decode, schedule)': (turn) => turn.playStart - turn.audioArrived,
  'voice to voice': (turn) => turn.playStart - turn.speechEnd,
}

/** Every turn the page measured over `repeats` runs of the microphone file, on a fresh instance with `env`. */
async function measure(label: string, env: Record<string, string>, runs: number): Promise<number[]> {
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx', ...env })
  const turns: TimedTurn[] = []
  let split = 0
  try {
    for (let run = 0; run < runs; run++) {
      const browser = await launchWithMicrophone(microphone.path)
      try {
        const page = await startTalking(browser, server.url, endOfTurnMs)
        // The whole file plays (2 s, then each recording and 5 s of silence), then 20 s for the last replies.
        await sleep((microphone.durationSeconds + 20) * 1000)
        const seen = await measuredTurns(page)
        const ends = await speechEndsOnPage(page, microphone, seen)
        for (const [index, turn] of seen.entries()) {
          const speechEnd = ends[index]
          if (turn.playStart === undefined) continue
          if (speechEnd === undefined) {
            split++
            console.log(`  heard ${JSON.stringify(turn.text).padEnd(70)} (ended at a pause inside the recording)`)
            continue
          }
          turns.push({ ...turn, speechEnd })
          console.log(`  heard ${JSON.stringify(turn.text).padEnd(70)} voice to voice ${((turn.playStart - speechEnd) * 1000).toFixed(0)} ms`)
        }
      } finally {
        await browser.close()
      }
    }
  } finally {
    await server.stop()
  }
  if (turns.length === 0) {
    console.log(`\n${label}: no turn timed (${split} ended at a pause inside a recording)`)
    return []
  }
  console.log(`\n${label}: ${turns.length} turns timed (${split} more ended at a pause inside a recording), endOfTurnMs ${endOfTurnMs}, ms on the page's AudioContext clock`)
  for (const [stage, of] of Object.entries(STAGES)) {
    const ms = turns.map((turn) => of(turn) * 1000)
    console.log(`  ${stage.padEnd(40)} p50 ${quantile(ms, 0.5).toFixed(0).padStart(5)}  p95 ${quantile(ms, 0.95).toFixed(0).padStart(5)}`)
  }
  return turns.map((turn) => (turn.playStart - turn.speechEnd) * 1000)
}

/** Barge-in over `runs` runs of the barge-in file: ms from the onset of the speech over a sounding reply to the page's stop. */
async function measureBargeIn(runs: number): Promise<number[]> {
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx' })
  const figures: number[] = []
  let notSounding = 0
  try {
    for (let run = 0; run < runs; run++) {
      const browser = await launchWithMicrophone(bargeMicrophone.path)
      try {
        const page = await startTalking(browser, server.url, endOfTurnMs)
        await sleep((bargeMicrophone.durationSeconds + 10) * 1000)
        const onsets = (await speechStartsOnPage(page, bargeMicrophone)) ?? []
        for (const turn of await measuredTurns(page)) {
          if (turn.interrupted === undefined) continue
          // The speech that stopped it: the last onset in the file before the stop, if it came
          // after the reply began (else it was speech that went on after a pause within a recording).
          const stopped = turn.stopped
          const onset = stopped === undefined ? undefined : onsets.filter((at) => at <= stopped + 0.2).at(-1)
          if (onset !== undefined && !(onset >= turn.playStart)) {
            notSounding++
            continue
          }
          if (stopped === undefined || onset === undefined) {
            notSounding++
            continue
          }
          figures.push((stopped - onset) * 1000)
          console.log(`  reply to ${JSON.stringify(turn.text).padEnd(60)} stopped ${((stopped - onset) * 1000).toFixed(0)} ms after the onset of the speech over it`)
        }
      } finally {
        await browser.close()
      }
    }
  } finally {
    await server.stop()
  }
  console.log(`\nbarge-in: ${figures.length} interruptions of a sounding reply timed (${notSounding} more interrupted a reply not yet or no longer sounding, or by speech that began before it), endOfTurnMs ${endOfTurnMs}, minSpeechMs 250`)
  if (figures.length > 0) {
    console.log(`  ${'onset of speech over the reply to playback stopped'.padEnd(52)} p50 ${quantile(figures, 0.5).toFixed(0).padStart(5)}  p95 ${quantile(figures, 0.95).toFixed(0).padStart(5)}`)
  }
  return figures
}

try {
  console.log(`load average at the start: ${loadavg().map((load) => load.toFixed(1)).join(' ')} (on ${availableParallelism()} cores)`)
  const resident = await measure('resident decoder, preemptive replies (the defaults)', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'true', AVATAR_VOICE_PREEMPTIVE: 'true' }, repeats)
  const atEnd = await measure('baseline: resident decoder, the reply started at the end of the turn', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'true', AVATAR_VOICE_PREEMPTIVE: 'false' }, repeats)
  // (Not in a smoke run: a minute more for the older baseline.)
  const perTurn = smoke ? [] : await measure('baseline: pocketsphinx_continuous per turn', { AVATAR_ASR_POCKETSPHINX_STREAMING: 'false', AVATAR_VOICE_PREEMPTIVE: 'false' }, 1)
  await measureBargeIn(repeats)
  console.log(`load average at the end: ${loadavg().map((load) => load.toFixed(1)).join(' ')}`)
  const ratio = (name: string, of: number[], to: number[]) => {
    if (of.length > 0 && to.length > 0) console.log(`voice to voice, ${name}: p50 ${(quantile(of, 0.5) / quantile(to, 0.5)).toFixed(2)}, p95 ${(quantile(of, 0.95) / quantile(to, 0.95)).toFixed(2)}`)
  }
  ratio('preemptive / started at the end of the turn', resident, atEnd)
  ratio('preemptive / per-turn process', resident, perTurn)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
