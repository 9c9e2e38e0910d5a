#!/usr/bin/env node
// Entry point of the `triad` command. Triad needs Node 24 (type stripping, node:sqlite);
// `npm ci` installs it into node_modules, so an older `node` on the PATH re-runs this
// file with that binary instead of failing.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const major = Number(process.versions.node.split('.')[0])

if (major < 24) {
  const bundled = join(root, 'node_modules', 'node', 'bin', 'node')
  if (!existsSync(bundled)) {
    console.error(`triad: Node.js 24 or later is required (this is ${process.version}); run \`npm ci\` in ${root} first.`)
    process.exit(1)
  }
  const result = spawnSync(bundled, ['--disable-warning=ExperimentalWarning', ...process.argv.slice(1)], { stdio: 'inherit' })
  process.exit(result.status ?? 1)
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
  const { main } = await import('../src/main.ts')
  process.exitCode = await main(process.argv.slice(2))
}
