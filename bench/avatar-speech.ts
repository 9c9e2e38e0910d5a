// Avatar speech benchmarks (issue 5). Usage: node bench/avatar-speech.ts [--repeats 5 --rounds 3 --smoke]
// 1. Local synthesis speed: seconds of audio per second of wall time (real-time factor) and time
//    to the first audio byte, for a 200-character Chinese and a 200-character English text, MP3
//    and WAV, through POST /v1/tts of a running `triad serve` (medians of sequential requests).
// 2. Concurrency: 8 simultaneous syntheses against one, with the worker pool at its default
//    (one thread per core) and, for comparison, forced to a single thread (one queue).
// 3. First synthesis after start (issue 27, item 4): a fresh `triad serve` (avatar only), its
//    start time (spawn to /readyz 200) and memory (RSS once ready), then the first English and the
//    first Chinese synthesis (WAV, 200 characters) against warm ones, with the threads warmed at
//    start (AVATAR_TTS_WARM=true, the default) and loaded on first use (false).
// 4. Viseme cost (issue 20): the viseme timeline as a share of synthesis time, end to end (POST
//    /v1/tts with `visemes: true` against the binary answer) and for the mapping alone (the
//    phoneme events of an in-process synthesis turned into a timeline).
import { readdirSync, readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { visemeTimeline } from '../src/services/avatar/modules/speech/index.ts'
import { createEspeakProvider, findVoice } from '../src/services/avatar/providers/tts/index.ts'
import { reportRow, smoke, startTriad, verdict } from './lib.ts'

const { values } = parseArgs({ options: { repeats: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, smoke: { type: 'boolean', default: false } } })
const repeats = smoke ? 1 : Number(values.repeats)
const rounds = smoke ? 1 : Number(values.rounds)

const CHINESE = (
  '今天天气很好，我们一起去公园散步吧。公园里有很多花，红的、黄的、白的，非常漂亮。孩子们在草地上跑来跑去，老人们坐在长椅上聊天。' +
  '湖边有人在钓鱼，也有人在划船。我们走累了，就在树下休息一会儿，喝点水，吃点水果。人工智能正在改变我们的生活，语音合成让机器能够开口说话，' +
  '语音识别让机器能够听懂我们的话。希望这个小小的头像能够陪你聊天，给你带来快乐。谢谢你的耐心，祝你今天过得愉快，再见！'
).slice(0, 200)
const ENGLISH = (
  'The avatar speaks without any network at all. It turns your words into sound on this machine, ' +
  'sentence by sentence, and streams the audio back while it is still talking. Thank you for listening today!'
)
  .padEnd(200, ' Thanks.')
  .slice(0, 200)

interface Sample {
  firstByteMs: number
  totalMs: number
  audioSeconds: number
  /** CPU seconds the server spent (all its threads), which a busy shared machine does not inflate. */
  cpuSeconds: number
}

/** The pid of the `triad serve` listening on `url`'s port, found through /proc (Linux). */
function serverPid(url: string): number | undefined {
  const port = new URL(url).port
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (args.includes('serve') && args[args.indexOf('--port') + 1] === port) return Number(entry)
    } catch {}
  }
  return undefined
}

/** utime + stime of a process, in seconds (clock ticks of 100 Hz). */
function cpuOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Seconds of audio in a WAV body (bytes after the 44-byte header) or an MP3 body (frame count). */
function audioSeconds(body: Buffer, format: 'mp3' | 'wav'): number {
  if (format === 'wav') return (body.length - 44) / (22050 * 2)
  let offset = 0
  let frames = 0
  while (offset + 4 <= body.length && body[offset] === 0xff && (body[offset + 1] & 0xe0) === 0xe0) {
    const header = body.readUInt32BE(offset)
    const bitrate = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160][(header >>> 12) & 15] * 1000
    offset += Math.floor((72 * bitrate) / 22050) + ((header >>> 9) & 1)
    frames++
  }
  return (frames * 576) / 22050
}

async function synthesize(url: string, text: string, format: 'mp3' | 'wav', pid?: number, visemes = false): Promise<Sample> {
  const cpuBefore = cpuOf(pid)
  const started = performance.now()
  const response = await fetch(`${url}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, format, visemes }) })
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`)
  const parts: Uint8Array[] = []
  let firstByteMs = 0
  for await (const chunk of response.body) {
    if (!firstByteMs) firstByteMs = performance.now() - started
    parts.push(chunk)
  }
  const totalMs = performance.now() - started
  const body = Buffer.concat(parts)
  const audio = visemes ? Buffer.from((JSON.parse(body.toString()) as { audio: string }).audio, 'base64') : body
  return { firstByteMs, totalMs, audioSeconds: audioSeconds(audio, format), cpuSeconds: cpuOf(pid) - cpuBefore }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function speed(url: string) {
  console.log('\n## Local synthesis speed (sequential requests, medians)\n')
  const pid = serverPid(url)
  console.log('| text | format | audio (s) | first byte (ms) | total (ms) | real-time factor (wall) | server CPU (s) | real-time factor (CPU) |')
  console.log('|---|---|---:|---:|---:|---:|---:|---:|')
  for (const [name, text] of smoke
    ? ([['English, 200 chars', ENGLISH]] as const)
    : ([
        ['Chinese, 200 chars', CHINESE],
        ['English, 200 chars', ENGLISH],
      ] as const)) {
    for (const format of smoke ? (['mp3'] as const) : (['mp3', 'wav'] as const)) {
      const samples: Sample[] = []
      for (let index = 0; index < repeats; index++) samples.push(await synthesize(url, text, format, pid))
      const audio = median(samples.map((sample) => sample.audioSeconds))
      const total = median(samples.map((sample) => sample.totalMs))
      const rtf = median(samples.map((sample) => sample.audioSeconds / (sample.totalMs / 1000)))
      const cpu = median(samples.map((sample) => sample.cpuSeconds))
      const firstByte = median(samples.map((sample) => sample.firstByteMs))
      console.log(`| ${name} | ${format} | ${audio.toFixed(1)} | ${firstByte.toFixed(0)} | ${total.toFixed(0)} | ${rtf.toFixed(1)}× | ${cpu.toFixed(2)} | ${(audio / cpu).toFixed(1)}× |`)
      reportRow({
        benchmark: 'avatar-speech',
        measure: `Local synthesis (POST /v1/tts), ${name}, ${format}: real-time factor by wall time and by server CPU; first audio byte`,
        target: '—',
        figure: `${rtf.toFixed(1)}× wall, ${(audio / cpu).toFixed(1)}× CPU, first byte ${firstByte.toFixed(0)} ms (${audio.toFixed(1)} s of audio)`,
        met: null,
        command: 'node bench/avatar-speech.ts',
      })
    }
  }
}

async function concurrency(url: string, label: string) {
  const one: number[] = []
  const eight: number[] = []
  for (let round = 0; round < rounds; round++) {
    for (let index = 0; index < (smoke ? 1 : 3); index++) one.push((await synthesize(url, ENGLISH, 'mp3')).totalMs)
    const started = performance.now()
    await Promise.all(Array.from({ length: 8 }, () => synthesize(url, ENGLISH, 'mp3')))
    eight.push(performance.now() - started)
  }
  const single = median(one)
  const all = median(eight)
  console.log(`| ${label} | ${single.toFixed(0)} | ${all.toFixed(0)} | ${(all / single).toFixed(2)}× |`)
  reportRow({
    benchmark: 'avatar-speech',
    measure: `8 syntheses at once ÷ one (English, 200 chars, MP3), worker pool ${label} (the scaling target is in bench/yardsticks.ts)`,
    target: '—',
    figure: `${(all / single).toFixed(2)}× the time (${single.toFixed(0)} ms one, ${all.toFixed(0)} ms eight)`,
    met: null,
    command: 'node bench/avatar-speech.ts',
  })
}

/** Resident memory of a process, in MB (Linux /proc). */
function rssMbOf(pid: number): number {
  const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1])
  return (pages * 4096) / 1e6
}

interface ColdStart {
  startMs: number
  rssMb: number
  /** First synthesis ÷ median of the warm ones, per language. */
  ratio: { English: number; Chinese: number }
  firstMs: { English: number; Chinese: number }
  warmMs: { English: number; Chinese: number }
}

async function coldStart(warm: boolean): Promise<ColdStart> {
  const started = performance.now()
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_TTS_WARM: String(warm) })
  try {
    const startMs = performance.now() - started
    const rssMb = rssMbOf(server.pid)
    const result: ColdStart = { startMs, rssMb, ratio: { English: 0, Chinese: 0 }, firstMs: { English: 0, Chinese: 0 }, warmMs: { English: 0, Chinese: 0 } }
    for (const [language, text] of [
      ['English', ENGLISH],
      ['Chinese', CHINESE],
    ] as const) {
      const first = (await synthesize(server.url, text, 'wav')).totalMs
      const warmRuns: number[] = []
      for (let index = 0; index < (smoke ? 1 : 5); index++) warmRuns.push((await synthesize(server.url, text, 'wav')).totalMs)
      result.firstMs[language] = first
      result.warmMs[language] = median(warmRuns)
      result.ratio[language] = first / median(warmRuns)
    }
    return result
  } finally {
    await server.stop()
  }
}

async function firstSynthesis() {
  console.log('\n## First synthesis after start (WAV, 200 chars; medians over fresh starts)\n')
  console.log('| threads | start (ms) | RSS ready (MB) | first English ÷ warm | first Chinese ÷ warm |')
  console.log('|---|---:|---:|---:|---:|')
  const starts = smoke ? 1 : rounds
  const byMode = new Map<boolean, ColdStart[]>([
    [false, []],
    [true, []],
  ])
  // Alternating, so a noisy stretch of the machine weighs on both.
  for (let round = 0; round < starts; round++) for (const warm of [false, true]) byMode.get(warm)?.push(await coldStart(warm))
  const summary = new Map<boolean, { startMs: number; rssMb: number; english: number; chinese: number; detail: string }>()
  for (const [warm, runs] of byMode) {
    const row = {
      startMs: median(runs.map((run) => run.startMs)),
      rssMb: median(runs.map((run) => run.rssMb)),
      english: median(runs.map((run) => run.ratio.English)),
      chinese: median(runs.map((run) => run.ratio.Chinese)),
      detail: `first ${median(runs.map((run) => run.firstMs.English)).toFixed(0)} / warm ${median(runs.map((run) => run.warmMs.English)).toFixed(0)} ms English, first ${median(runs.map((run) => run.firstMs.Chinese)).toFixed(0)} / warm ${median(runs.map((run) => run.warmMs.Chinese)).toFixed(0)} ms Chinese`,
    }
    summary.set(warm, row)
    const label = warm ? 'warmed at start (AVATAR_TTS_WARM=true)' : 'loaded on first use (AVATAR_TTS_WARM=false)'
    console.log(`| ${label} | ${row.startMs.toFixed(0)} | ${row.rssMb.toFixed(0)} | ${row.english.toFixed(2)}× | ${row.chinese.toFixed(2)}× |`)
  }
  const cold = summary.get(false)
  const warm = summary.get(true)
  if (!cold || !warm) return
  const worst = Math.max(warm.english, warm.chinese)
  reportRow({
    benchmark: 'avatar-speech',
    measure: 'First synthesis after start ÷ a warm one (POST /v1/tts, WAV, 200 chars; English and Chinese, each the first of its language), threads warmed at start',
    target: '≤ 2×',
    figure: `English ${warm.english.toFixed(2)}×, Chinese ${warm.chinese.toFixed(2)}× (${warm.detail}); loaded on first use instead: English ${cold.english.toFixed(2)}×, Chinese ${cold.chinese.toFixed(2)}× (${cold.detail})`,
    met: verdict(worst <= 2),
    command: 'node bench/avatar-speech.ts',
  })
  reportRow({
    benchmark: 'avatar-speech',
    measure: 'What warming at start costs: start of `triad serve` (avatar only, spawn to /readyz 200) and its resident memory once ready, warmed vs loaded on first use',
    target: '—',
    figure: `start ${warm.startMs.toFixed(0)} vs ${cold.startMs.toFixed(0)} ms (+${(warm.startMs - cold.startMs).toFixed(0)} ms), RSS ${warm.rssMb.toFixed(0)} vs ${cold.rssMb.toFixed(0)} MB (+${(warm.rssMb - cold.rssMb).toFixed(0)} MB)`,
    met: null,
    command: 'node bench/avatar-speech.ts',
  })
}

/** What the timeline costs: end to end over HTTP, and the phoneme-to-viseme mapping alone in process. */
async function visemeCost(url: string) {
  console.log('\n## Viseme timeline cost (MP3, medians)\n')
  console.log('| text | binary answer (ms) | JSON with visemes (ms) | extra, end to end | mapping alone (ms) | mapping ÷ synthesis |')
  console.log('|---|---:|---:|---:|---:|---:|')
  const provider = createEspeakProvider({ threads: 1 })
  const read = async (text: string, voiceId: string) => {
    const voice = findVoice(voiceId)
    if (!voice) throw new Error(`no voice ${voiceId}`)
    const stream = await provider.synthesize({ text, voice, ratePercent: 0, format: 'mp3' })
    for await (const chunk of stream.chunks) void chunk
    const timing = await stream.timing
    if (!timing) throw new Error('espeak gave no timing')
    return timing
  }
  try {
    // Warm up: the worker thread starts and loads espeak-ng once.
    await read('Warm up.', 'en-US-JennyNeural')
    for (const [name, text, voiceId] of smoke
      ? ([['English, 60 chars', ENGLISH.slice(0, 60), 'en-US-JennyNeural']] as const)
      : ([
          ['Chinese, 200 chars', CHINESE, 'zh-CN-XiaoxiaoNeural'],
          ['English, 200 chars', ENGLISH, 'en-US-JennyNeural'],
        ] as const)) {
      const binary: number[] = []
      const json: number[] = []
      for (let index = 0; index < repeats; index++) {
        binary.push((await synthesize(url, text, 'mp3')).totalMs)
        json.push((await synthesize(url, text, 'mp3', undefined, true)).totalMs)
      }
      // In process: one synthesis's own phoneme events, mapped many times over.
      const started = performance.now()
      const timing = await read(text, voiceId)
      const synthesisMs = performance.now() - started
      const loops = smoke ? 20 : 500
      const mapStarted = performance.now()
      for (let index = 0; index < loops; index++) visemeTimeline(timing)
      const mappingMs = (performance.now() - mapStarted) / loops
      const [plain, withVisemes] = [median(binary), median(json)]
      const extra = (withVisemes - plain) / plain
      console.log(
        `| ${name} | ${plain.toFixed(0)} | ${withVisemes.toFixed(0)} | ${(extra * 100).toFixed(1)} % | ${mappingMs.toFixed(3)} | ${((mappingMs / synthesisMs) * 100).toFixed(2)} % |`,
      )
      reportRow({
        benchmark: 'avatar-speech',
        measure: `Viseme timeline as a share of synthesis time, ${name}, MP3: JSON with visemes vs the binary answer (end to end), and the phoneme-to-viseme mapping alone`,
        target: '—',
        figure: `${extra >= 0 ? '+' : ''}${(extra * 100).toFixed(1)} % end to end (${plain.toFixed(0)} → ${withVisemes.toFixed(0)} ms); mapping ${mappingMs.toFixed(3)} ms = ${((mappingMs / synthesisMs) * 100).toFixed(2)} % of a ${synthesisMs.toFixed(0)} ms synthesis (${timing.phonemes.length} phonemes)`,
        met: null,
        command: 'node bench/avatar-speech.ts',
      })
    }
  } finally {
    await provider.close()
  }
}

async function withServer(env: Record<string, string>, work: (url: string) => Promise<void>) {
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', ...env })
  try {
    // Warm up: worker threads start and compile the WebAssembly on first use.
    await Promise.all(Array.from({ length: smoke ? 2 : 4 }, () => synthesize(server.url, ENGLISH, 'mp3')))
    if (!smoke) await synthesize(server.url, CHINESE, 'mp3')
    await work(server.url)
  } finally {
    await server.stop()
  }
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
console.log(`# Avatar speech bench — ${cpus().length} CPU cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, load average ${load}`)
await withServer({}, async (url) => {
  await speed(url)
  await visemeCost(url)
})
await firstSynthesis()
console.log('\n## 8 concurrent syntheses vs one (English, 200 chars, MP3; medians)\n')
console.log('| worker pool | one (ms) | 8 at once (ms) | ratio |')
console.log('|---|---:|---:|---:|')
await withServer({}, (url) => concurrency(url, `default (${cpus().length} threads)`))
if (!smoke) await withServer({ AVATAR_TTS_THREADS: '1' }, (url) => concurrency(url, '1 thread (a single queue)'))
