#!/usr/bin/env node
// Entry point of the `triad` command. Triad needs Node 24 (type stripping, node:sqlite);
// `npm ci` installs it into node_modules, so an older `node` on the PATH re-runs this
// file with that binary instead of failing.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const major = Number(process.versions.node.split('.')[0])
const semiSpaceFlags = youngGenerationCap()

if (major < 24) {
  const bundled = join(root, 'node_modules', 'node', 'bin', 'node')
  if (!existsSync(bundled)) {
    console.error(`triad: Node.js 24 or later is required (this is ${process.version}); run \`npm ci\` in ${root} first.`)
    process.exit(1)
  }
  // Its own process group (`detached`), so that a signal reaches it once, from here: a process
  // manager signals the pid it started (this one), and Ctrl-C signals the terminal's foreground
  // group (this one). Reaching it twice, directly and forwarded, would read as a second signal,
  // which skips the graceful shutdown.
  const child = spawn(bundled, ['--disable-warning=ExperimentalWarning', ...semiSpaceFlags, ...process.argv.slice(1)], {
    stdio: 'inherit',
    detached: true,
    // The server leaves if this launcher disappears without passing a signal on (SIGKILL).
    env: { ...process.env, TRIAD_LAUNCHER: '1' },
  })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  // Under npm, which dies of SIGHUP without telling its child: pass a SIGTERM on when orphaned.
  if (process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid
    setInterval(() => process.ppid !== parent && child.kill('SIGTERM'), 500).unref()
  }
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)))
} else if (semiSpaceFlags.length > 0 && typeof process.execve === 'function' && process.platform !== 'win32') {
  // Heap sizes are fixed when V8 starts, so the flag needs a fresh start: execve keeps the pid.
  process.execve(process.execPath, [process.execPath, ...semiSpaceFlags, ...process.execArgv, ...process.argv.slice(1)], process.env)
} else {
  // Under sustained load V8 sometimes decided to pretenure an allocation site that runs once
  // per request: from then on every request's objects survived young-generation collections
  // (10-20 ms scavenges, CPU per request up 50-80 %), at random from one start to the next.
  // See "Garbage collector flag" in docs/decisions.md.
  setFlagsFromString('--no-allocation-site-pretenuring')
  process.removeAllListeners('warning')
  process.on('warning', (warning) => {
    if (warning.name !== 'ExperimentalWarning') console.warn(warning)
  })
  // Tracing patches fastify, pg, ioredis and node:http as they load, so it starts before any of
  // them; without an OTLP endpoint nothing of OpenTelemetry is loaded. See docs/operations.md.
  if ((process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && process.env.OTEL_SDK_DISABLED !== 'true') {
    const { register } = await import('node:module')
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
    const { startTracing } = await import('../src/core/telemetry/tracing.ts')
    startTracing()
  }
  const { main } = await import('../src/main.ts')
  process.exitCode = await main(process.argv.slice(2))
}

/**
 * `--max-semi-space-size=16` for `triad serve`, unless the operator chose a size. V8 in Node 24
 * sizes the young generation from the heap limit (64 MB semi-spaces on a machine with 24 GiB),
 * and a burst of connections grows it to that size and keeps it: 1 000 open streams peaked at
 * 296 MB RSS, 107 MB of it young generation, with 16 MB semi-spaces 225 MB, and no measurable
 * difference in CPU per request. See "Young generation size" in docs/decisions.md.
 */
function youngGenerationCap() {
  const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes('--max-semi-space-size'))
  return process.argv[2] === 'serve' && !chosen ? ['--max-semi-space-size=16'] : []
}
