import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cleanup } from './build-app.ts'
import { freePort } from './free-port.ts'

const shipped = new URL('../../deploy/nginx.conf', import.meta.url).pathname

export interface RunningNginx {
  /** `http://127.0.0.1:<port>` */
  base: string
  /** What nginx wrote to its error log so far (warnings and errors). */
  errors(): string
}

/**
 * The shipped deploy/nginx.conf, run for real in front of `upstreams` (`host:port` each, in place
 * of triad-a and triad-b) on a free port of 127.0.0.1, one worker; stopped when the test ends.
 */
export async function startNginx(t: Cleanup, upstreams: [string, string]): Promise<RunningNginx> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'triad-nginx-'))
  const config = readFileSync(shipped, 'utf8')
    .replace(/listen \d+;/, `listen 127.0.0.1:${port};`)
    .replace('server triad-a:8080', `server ${upstreams[0]}`)
    .replace('server triad-b:8080', `server ${upstreams[1]}`)
    .replace('worker_processes auto;', 'worker_processes 1;')
    .replace('http {', `http {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;`)
  writeFileSync(join(dir, 'nginx.conf'), config)
  const globals = `pid ${dir}/nginx.pid; error_log stderr warn; daemon off;`
  const check = spawnSync('nginx', ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-g', globals], { encoding: 'utf8' })
  assert.equal(check.status, 0, check.stderr)
  assert.match(check.stderr, /test is successful/)

  const nginx: ChildProcess = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', globals], { stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  nginx.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  t.after(() => {
    nginx.kill('SIGTERM')
  })
  const base = `http://127.0.0.1:${port}`
  for (let tries = 0; ; tries++) {
    const up = await fetch(`${base}/healthz`).then((response) => response.ok, () => false)
    if (up) break
    assert.ok(tries < 100, `nginx did not start: ${errors}`)
    await sleep(100)
  }
  return { base, errors: () => errors }
}
