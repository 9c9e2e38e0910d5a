// CPU per second of speech and word errors of voice mode's pocketsphinx decoder, for several
// search settings in one run (issue 29, item 8: twenty people speaking at once on two cores).
// Usage: node bench/avatar-voice-decoder.ts [--smoke] [--rounds N] [--configs name,name,...]
//   (needs apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata)
//
// The ten recordings of Debian's pocketsphinx-testdata go through voice mode's own turn detector
// (Silero, endOfTurnMs 800, with the silence bench/avatar-voice-wer.ts sends around them); the
// utterances it cuts are decoded in this process, as a resident decoder reads them: 0.3 s of audio
// a call, a partial hypothesis after each, the hypothesis at the end. The decoder calls run
// synchronously on this thread, and the figure is this thread's CPU time (user + system) over
// them divided by the seconds of audio decoded: what a core spends per second of speech, whatever
// else the machine runs (a loaded machine still makes each call slower: caches, shared cores).
// Every round decodes every recording with each configuration, in an order rotated by recording
// and round, so a burst of load elsewhere falls on all of them; a configuration's figure is its
// median over the rounds, and the ratios are against the current configuration (SEARCH_OPTIONS of
// pocketsphinx.stream.ts) in the same run. `--alone` leaves the current one out; `--words` prints
// what each configuration heard.
import koffi from 'koffi'
import { readFileSync } from 'node:fs'
import { decodeWav, resample } from '../src/services/avatar/providers/asr/wav-decode.ts'
import { modelOptions, SEARCH_OPTIONS } from '../src/services/avatar/providers/asr/pocketsphinx.stream.ts'
import { joinSamples } from '../src/services/avatar/providers/asr/index.ts'
import { createSileroTurnDetector } from '../src/services/avatar/modules/voice/turn-detector.ts'
import { smoke } from './lib.ts'
import { editDistance, references, words } from './word-errors.ts'

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us'
const RATE = 16_000
/** Settings on top of the current ones (a value of null removes the current setting). */
const CONFIGS: Record<string, Record<string, string | null>> = {
  current: {},
  // What voice mode searched with before issue 29 item 8's measurements (2026-11-28).
  before: { '-maxhmmpf': '3000', '-ds': null, '-topn': null },
  'ds 2': { '-ds': '2' },
  'topn 2': { '-topn': '2' },
  'topn 1': { '-topn': '1' },
  'maxhmmpf 1500': { '-maxhmmpf': '1500' },
  'maxhmmpf 1000': { '-maxhmmpf': '1000' },
  'maxwpf 3': { '-maxwpf': '3' },
  'pl_window 10': { '-pl_window': '10' },
  'pl_window 0': { '-pl_window': '0' },
  'beam 1e-40 wbeam 1e-20 pbeam 1e-40': { '-beam': '1e-40', '-wbeam': '1e-20', '-pbeam': '1e-40' },
  'beam 1e-30 wbeam 1e-20 pbeam 1e-30': { '-beam': '1e-30', '-wbeam': '1e-20', '-pbeam': '1e-30' },
  'lpbeam 1e-20 lponlybeam 1e-20': { '-lpbeam': '1e-20', '-lponlybeam': '1e-20' },
  'pl_beam 1e-5 pl_pbeam 1e-5': { '-pl_beam': '1e-5', '-pl_pbeam': '1e-5' },
  'lw 8': { '-lw': '8' },
  'remove_noise no': { '-remove_noise': 'no' },
  'wbeam 1e-20': { '-wbeam': '1e-20' },
  'beam 1e-44 pbeam 1e-44': { '-beam': '1e-44', '-pbeam': '1e-44' },
  'maxhmmpf 2500': { '-maxhmmpf': '2500' },
  'ds 3': { '-ds': '3' },
  'ds 2 topn 2': { '-ds': '2', '-topn': '2' },
  'ds 2 topn 1': { '-ds': '2', '-topn': '1' },
  'ds 2 topn 1 maxwpf 3': { '-ds': '2', '-topn': '1', '-maxwpf': '3' },
  'ds 2 topn 1 maxhmmpf 2500': { '-ds': '2', '-topn': '1', '-maxhmmpf': '2500' },
  'ds 2 topn 1 beam 1e-44 pbeam 1e-44': { '-ds': '2', '-topn': '1', '-beam': '1e-44', '-pbeam': '1e-44' },
  'ds 2 topn 1 wbeam 1e-20': { '-ds': '2', '-topn': '1', '-wbeam': '1e-20' },
  'ds 2 topn 1 remove_noise no': { '-ds': '2', '-topn': '1', '-remove_noise': 'no' },
  'topn 1 maxwpf 3': { '-topn': '1', '-maxwpf': '3' },
  'topn 1 maxhmmpf 2500': { '-topn': '1', '-maxhmmpf': '2500' },
  'topn 1 maxwpf 3 maxhmmpf 2500': { '-topn': '1', '-maxwpf': '3', '-maxhmmpf': '2500' },
  'ds 2 topn 2 maxwpf 3 maxhmmpf 2500': { '-ds': '2', '-topn': '2', '-maxwpf': '3', '-maxhmmpf': '2500' },
  'ds 2 maxwpf 3 maxhmmpf 2500': { '-ds': '2', '-maxwpf': '3', '-maxhmmpf': '2500' },
  'ds 2 maxhmmpf 2500': { '-ds': '2', '-maxhmmpf': '2500' },
  'ds 2 topn 2 maxhmmpf 2500': { '-ds': '2', '-topn': '2', '-maxhmmpf': '2500' },
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name)
  return index > 0 ? process.argv[index + 1] : undefined
}

const rounds = Number(argument('--rounds') ?? (smoke ? 1 : 3))
const chosen = argument('--configs')?.split(',') ?? Object.keys(CONFIGS)
for (const name of chosen) if (!CONFIGS[name]) throw new Error(`unknown configuration "${name}"; known: ${Object.keys(CONFIGS).join(', ')}`)
if (!chosen.includes('current') && !process.argv.includes('--alone')) chosen.unshift('current')

// --- the recordings, cut into utterances as voice mode cuts them ---

/** 16 kHz samples as a page sends them (16-bit), with bench/avatar-voice-wer.ts's silence around. */
function recording(file: string): Float32Array {
  const decoded = decodeWav(readFileSync(file))
  if (!decoded) throw new Error(`not a WAV: ${file}`)
  const speech = resample(decoded, RATE).map((sample) => Math.round(Math.max(-1, Math.min(1, sample)) * 32767) / 32768)
  return joinSamples([new Float32Array(0.5 * RATE), speech, new Float32Array(1.5 * RATE)])
}

/** The utterances voice mode's turn detector hands the recogniser (only those that made a turn). */
async function utterances(samples: Float32Array): Promise<Int16Array[]> {
  const turns: Int16Array[] = []
  let current: Float32Array[] = []
  const detector = await createSileroTurnDetector({
    endOfTurnMs: 800,
    pauseMs: 650,
    minSpeechMs: 250,
    maxUtteranceMs: 30_000,
    onSpeech: () => {},
    onSilence: () => {},
    onUtteranceAudio: (audio) => current.push(audio),
    onTurn: () => {
      turns.push(toPcm16(joinSamples(current)))
      current = []
    },
    onDiscarded: () => (current = []),
  })
  // 20 ms frames, as the page sends them.
  for (let start = 0; start < samples.length; start += 320) await detector.push(samples.subarray(start, start + 320))
  await detector.end()
  await detector.close()
  return turns
}

function toPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length)
  for (let index = 0; index < samples.length; index++) pcm[index] = Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767)
  return pcm
}

// --- the decoder, called synchronously on this thread ---

const sphinxbase = koffi.load('libsphinxbase.so.3')
const pocketsphinx = koffi.load('libpocketsphinx.so.3')
const cmdLnInit = sphinxbase.func('void *cmd_ln_init(void *inout, void *defn, int strict, ...)')
const psArgs = pocketsphinx.func('void *ps_args()')
const psInit = pocketsphinx.func('void *ps_init(void *config)')
const psFree = pocketsphinx.func('int ps_free(void *ps)')
const startUtt = pocketsphinx.func('int ps_start_utt(void *ps)')
const endUtt = pocketsphinx.func('int ps_end_utt(void *ps)')
const processRaw = pocketsphinx.func('int ps_process_raw(void *ps, const int16_t *data, size_t n, int no_search, int full_utt)')
const getHyp = pocketsphinx.func('const char *ps_get_hyp(void *ps, int32_t *score)')

function settings(name: string): Record<string, string> {
  const merged: Record<string, string | null> = { ...modelOptions(MODEL_DIR), '-logfn': '/dev/null', ...SEARCH_OPTIONS, ...CONFIGS[name] }
  return Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null))
}

function decoder(name: string): unknown {
  const args = Object.entries(settings(name)).flatMap(([option, value]) => ['str', option, 'str', value])
  const ps = psInit(cmdLnInit(null, psArgs(), 1, ...args, 'void *', null))
  if (!ps) throw new Error(`pocketsphinx rejected the configuration "${name}"`)
  return ps
}

/** This thread's CPU time in microseconds (Node 23.9+), else the process's (Node 20: no worker threads run here). */
function cpuMicros(): number {
  const usage = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage()
  return usage.user + usage.system
}

const PART = 0.3 * RATE

/** The transcript of one utterance, and the CPU time the decoder spent on it. */
function decode(ps: unknown, pcm: Int16Array): { text: string; micros: number } {
  const score = new Int32Array(1)
  const started = cpuMicros()
  startUtt(ps)
  for (let start = 0; start < pcm.length; start += PART) {
    const part = pcm.subarray(start, start + PART)
    processRaw(ps, part, part.length, 0, 0)
    getHyp(ps, score)
  }
  const text = String(getHyp(ps, score) ?? '').trim()
  endUtt(ps)
  return { text, micros: cpuMicros() - started }
}

// --- the run ---

const refs = smoke ? references().filter((_, index) => index === 0 || index === 5) : references()
const cut = await Promise.all(refs.map(async (ref) => ({ ...ref, turns: await utterances(recording(ref.file)) })))
const audioSeconds = cut.reduce((sum, ref) => sum + ref.turns.reduce((turns, turn) => turns + turn.length, 0), 0) / RATE
const referenceWords = cut.reduce((sum, ref) => sum + ref.words.length, 0)
console.log(`${cut.length} recordings, ${referenceWords} words; ${cut.reduce((sum, ref) => sum + ref.turns.length, 0)} utterances, ${audioSeconds.toFixed(1)} s of audio decoded; ${rounds} rounds`)

const decoders = new Map(chosen.map((name) => [name, decoder(name)]))
const cpu = new Map<string, number[]>(chosen.map((name) => [name, []]))
const errors = new Map<string, { count: number; heard: string[] }>()
for (let round = 0; round < rounds; round++) {
  const micros = new Map(chosen.map((name) => [name, 0]))
  const said = new Map(chosen.map((name) => [name, [] as string[]]))
  // Recording by recording, every configuration in a rotated order: a burst of load elsewhere
  // falls on all of them, and no configuration always runs first (cold caches) or last.
  for (const [index, ref] of cut.entries()) {
    for (const [position] of chosen.entries()) {
      const name = chosen[(position + round + index) % chosen.length]
      const texts: string[] = []
      for (const turn of ref.turns) {
        const result = decode(decoders.get(name), turn)
        micros.set(name, (micros.get(name) ?? 0) + result.micros)
        texts.push(result.text)
      }
      said.get(name)?.push(words(texts.join(' ')).join(' '))
    }
  }
  for (const name of chosen) {
    cpu.get(name)?.push((micros.get(name) ?? 0) / 1e6 / audioSeconds)
    // The same audio gives the same words every round; the first round's are kept.
    const heard = said.get(name) ?? []
    if (!errors.has(name)) errors.set(name, { count: heard.reduce((sum, text, index) => sum + editDistance(cut[index].words, words(text)), 0), heard })
  }
}
for (const ps of decoders.values()) psFree(ps)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const base = { cpu: median(cpu.get('current') ?? cpu.get(chosen[0]) ?? []), errors: errors.get('current')?.count ?? 0 }
console.log(`\n| configuration (on top of the current) | CPU s per audio s (median, rounds) | vs current | word errors | WER |`)
console.log('|---|---|---|---|---|')
for (const name of chosen) {
  const figures = cpu.get(name) ?? []
  const wrong = errors.get(name)?.count ?? 0
  const rounded = figures.map((figure) => figure.toFixed(3)).join(' ')
  console.log(`| ${name === 'current' ? `current (${Object.entries(SEARCH_OPTIONS).map(([option, value]) => `${option} ${value}`).join(' ')})` : name} | ${median(figures).toFixed(3)} (${rounded}) | ${(median(figures) / base.cpu).toFixed(2)} | ${wrong}/${referenceWords} (${wrong - base.errors >= 0 ? '+' : ''}${wrong - base.errors}) | ${((100 * wrong) / referenceWords).toFixed(1)} % |`)
}
if (process.argv.includes('--words')) {
  for (const name of chosen) {
    console.log(`\n${name}:`)
    for (const [index, heard] of (errors.get(name)?.heard ?? []).entries()) console.log(`  ${cut[index].file.split('/').slice(-2).join('/')}: ${heard}`)
  }
}
