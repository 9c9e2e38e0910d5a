// `npm run bench`: every benchmark, one after another, each in its own process; their result
// rows (`@bench-row` lines, bench/lib.ts reportRow) become one table.
//   npm run bench                  full measured run; prints the table
//   npm run bench -- --smoke       each benchmark for a few seconds, no targets asserted (CI)
//   npm run bench -- --readme      full run, then the table and the machine go into bench/README.md
//   npm run bench -- --only authn,yardsticks
// The exit code is non-zero only when a benchmark crashed (a missed target is a row, not a crash).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { CHROMIUM } from '../test/helpers/browser.ts'
import { standbyPairUnavailable } from '../test/helpers/postgres-standby.ts'
import type { BenchRow } from './lib.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    readme: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
})
const root = new URL('..', import.meta.url).pathname

interface Benchmark {
  name: string
  file: string
  /** Arguments of the full run. */
  args?: string[]
  /** Arguments of the smoke run (a few seconds). */
  smokeArgs: string[]
  /** Why it cannot run here, if it cannot. */
  unavailable?: () => string | undefined
  /** How long its smoke run may take before it is stopped as hung (SMOKE_LIMIT_MS unless set). */
  smokeLimitMs?: number
}

const PEER_PACKAGES = ['python3-fastapi', 'python3-uvicorn', 'python3-pydantic', 'python3-httpx', 'python3-multipart', 'python3-websockets']

function peerUnavailable(): string | undefined {
  const missing = PEER_PACKAGES.filter((name) => {
    try {
      return !execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('install ok installed')
    } catch {
      return true
    }
  })
  if (missing.length > 0) return `Debian packages missing: ${missing.join(', ')} (bench/peer/setup.sh installs them)`
  if (!existsSync(join(root, 'bench/peer/source/app/main.py')) && !process.env.PEER_SOURCE) return "the meta-human backend's source is not in bench/peer/source (bench/peer/setup.sh SOURCE)"
  return undefined
}

const benchmarks: Benchmark[] = [
  { name: 'yardsticks', file: 'bench/yardsticks.ts', smokeArgs: ['--smoke'] },
  { name: 'checkout-costs', file: 'bench/checkout-costs.ts', smokeArgs: ['--smoke'] },
  { name: 'authn', file: 'bench/authn.ts', smokeArgs: ['--smoke'] },
  { name: 'payments', file: 'bench/payments.ts', smokeArgs: ['--smoke'] },
  { name: 'capture-statements', file: 'bench/capture-statements.ts', smokeArgs: ['--smoke'] },
  { name: 'pg-yardsticks', file: 'bench/pg-yardsticks.ts', smokeArgs: ['--smoke'] },
  { name: 'pg-statement-path', file: 'bench/pg-statement-path.ts', smokeArgs: ['--smoke'] },
  { name: 'avatar-chat', file: 'bench/avatar-chat.ts', smokeArgs: ['--smoke'] },
  { name: 'avatar-speech', file: 'bench/avatar-speech.ts', smokeArgs: ['--smoke'] },
  { name: 'avatar-llm-client', file: 'bench/avatar-llm-client.ts', smokeArgs: ['--smoke'] },
  {
    name: 'avatar-voice',
    file: 'bench/avatar-voice.ts',
    smokeArgs: ['--smoke'],
    unavailable: () => (existsSync('/usr/share/pocketsphinx/model/en-us') ? undefined : 'Debian packages missing: pocketsphinx, pocketsphinx-en-us'),
  },
  {
    name: 'avatar-voice-wer',
    file: 'bench/avatar-voice-wer.ts',
    smokeArgs: ['--smoke'],
    unavailable: () => (existsSync('/usr/share/pocketsphinx/test/data/librivox') ? undefined : 'Debian package missing: pocketsphinx-testdata'),
  },
  {
    name: 'avatar-voice-decoder',
    file: 'bench/avatar-voice-decoder.ts',
    smokeArgs: ['--smoke'],
    unavailable: () => (existsSync('/usr/share/pocketsphinx/test/data/librivox') ? undefined : 'Debian package missing: pocketsphinx-testdata'),
  },
  {
    name: 'avatar-voice-browser',
    file: 'bench/avatar-voice-browser.ts',
    smokeArgs: ['--smoke'],
    // Two timed turns and the barge-in recordings in Chromium, each with a server of its own:
    // 125-135 s on the 2-core machine (2026-12-08), past the common limit though nothing hangs.
    smokeLimitMs: 240_000,
    unavailable: () =>
      existsSync('/usr/share/pocketsphinx/test/data/librivox') && existsSync(CHROMIUM) ? undefined : 'Debian packages missing: pocketsphinx-testdata or chromium',
  },
  { name: 'avatar-opus-decoder', file: 'bench/avatar-opus-decoder.ts', smokeArgs: ['--decoders', '50'] },
  { name: 'core-utilities', file: 'bench/core-utilities.ts', smokeArgs: ['--smoke'] },
  { name: 'metrics-overhead', file: 'bench/metrics-overhead.ts', args: ['--profile'], smokeArgs: ['--smoke'] },
  { name: 'growth', file: 'bench/growth.ts', smokeArgs: ['--smoke'] },
  { name: 'scaling', file: 'bench/scaling.ts', smokeArgs: ['--smoke'] },
  { name: 'redis-outage', file: 'bench/redis-outage.ts', smokeArgs: ['--smoke'] },
  { name: 'standby-reads', file: 'bench/standby-reads.ts', smokeArgs: ['--smoke'], unavailable: () => standbyPairUnavailable },
  { name: 'peer', file: 'bench/peer/run.ts', smokeArgs: ['--quick'], unavailable: peerUnavailable },
]

const only = values.only ? new Set(values.only.split(',')) : undefined
const rows: BenchRow[] = []
const crashed: string[] = []
const started = Date.now()

/** The longest one benchmark's smoke run may take (the slowest takes about a minute on a loaded machine; a hang is cut short at twice that). */
const SMOKE_LIMIT_MS = 120_000

async function run(benchmark: Benchmark): Promise<void> {
  const args = values.smoke ? benchmark.smokeArgs : (benchmark.args ?? [])
  const commandLine = `node ${benchmark.file}${args.length ? ` ${args.join(' ')}` : ''}`
  const why = benchmark.unavailable?.()
  if (why) {
    console.log(`\n━━━ ${benchmark.name}: skipped (${why})`)
    rows.push({ benchmark: benchmark.name, measure: `${benchmark.name}: skipped`, target: '—', figure: why, met: null, command: commandLine })
    return
  }
  console.log(`\n━━━ ${benchmark.name}: ${commandLine}`)
  const startedAt = performance.now()
  const child = spawn(process.execPath, [join(root, benchmark.file), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
  // A smoke run is seconds per benchmark: one that hangs is stopped (and counted as crashed)
  // rather than holding CI until its own time limit.
  const smokeLimitMs = benchmark.smokeLimitMs ?? SMOKE_LIMIT_MS
  const limit = values.smoke
    ? setTimeout(() => {
        console.log(`━━━ ${benchmark.name}: still running after ${smokeLimitMs / 1000} s; killed`)
        child.kill('SIGKILL')
      }, smokeLimitMs)
    : undefined
  const own: BenchRow[] = []
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('@bench-row ')) own.push(JSON.parse(line.slice('@bench-row '.length)) as BenchRow)
    else console.log(`  ${line}`)
  }
  const code = child.exitCode ?? (await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode))))
  clearTimeout(limit)
  console.log(`━━━ ${benchmark.name}: ${((performance.now() - startedAt) / 1000).toFixed(0)} s`)
  rows.push(...own.map((row) => ({ ...row, benchmark: benchmark.name })))
  if (code !== 0) {
    crashed.push(benchmark.name)
    rows.push({ benchmark: benchmark.name, measure: `${benchmark.name}: crashed`, target: '—', figure: `exit code ${code}`, met: false, command: commandLine })
  }
}

for (const benchmark of benchmarks) if (!only || only.has(benchmark.name)) await run(benchmark)

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
const met = (value: boolean | null) => (value === null ? '—' : value ? 'yes' : '**no**')
const tableLine = (row: BenchRow) => `| ${cell(row.measure)} | ${cell(row.target)} | ${cell(row.figure)} | ${met(row.met)} | \`${cell(row.command)}\` |`
const tableLines = rows.map(tableLine)
const header = ['| measure | target | figure | met | command |', '|---|---|---|---|---|']
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${load} at the end, ${Math.round((Date.now() - started) / 60_000)} min${values.smoke ? ', smoke run' : ''}`

console.log(`\n${[...header, ...tableLines].join('\n')}\n\nMachine: ${machine}`)
if (crashed.length > 0) console.log(`Crashed: ${crashed.join(', ')}`)

/**
 * The README's table after this run: all of it after a full run; after `--only`, the rows of the
 * benchmarks that ran replace theirs (found by the file in the command column) and the others
 * stay, in the order of `benchmarks`, with the re-run named beside the machine.
 */
function readmeTable(previous: string): string {
  if (!only) return `${[...header, ...tableLines].join('\n')}\n\nMachine: ${machine}.`
  const previousLines = previous.split('\n').filter((line) => line.startsWith('| ') && !header.includes(line))
  const fileOf = (line: string) => /`node ([^ `]+)/.exec(line)?.[1]
  const merged = benchmarks.flatMap((benchmark) =>
    only.has(benchmark.name) ? rows.filter((row) => row.benchmark === benchmark.name).map(tableLine) : previousLines.filter((line) => fileOf(line) === benchmark.file),
  )
  // A re-run line stays while one of the benchmarks it names still has its rows from then.
  const stillShown = (line: string) => (/^Re-run ([^:]+):/.exec(line)?.[1] ?? '').split(', ').some((name) => !only.has(name))
  const previousMachine = previous.split('\n').filter((line) => line.startsWith('Machine: ') || (line.startsWith('Re-run') && stillShown(line)))
  return `${[...header, ...merged].join('\n')}\n\n${previousMachine.join('\n')}\nRe-run ${[...only].join(', ')}: ${machine}.`
}

if (values.readme) {
  const path = join(root, 'bench/README.md')
  const readme = readFileSync(path, 'utf8')
  const start = readme.indexOf('<!-- table -->')
  const end = readme.indexOf('<!-- /table -->')
  if (start < 0 || end < start) throw new Error('bench/README.md has no <!-- table --> … <!-- /table --> markers')
  const previous = readme.slice(start + '<!-- table -->'.length, end)
  writeFileSync(path, `${readme.slice(0, start)}<!-- table -->\n${readmeTable(previous)}\n${readme.slice(end)}`)
  console.log('bench/README.md updated')
}
process.exitCode = crashed.length > 0 ? 1 : 0
