import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

const fixture = new URL('../fixtures/slow-server.ts', import.meta.url).pathname

describe('graceful shutdown', () => {
  it('on SIGTERM, finishes the in-flight request, stops accepting once the backlog is drained, closes and exits 0', async (t) => {
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const lines = createInterface({ input: child.stdout })
    const output: string[] = []
    const address = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        output.push(line)
        const match = /^listening (\S+)$/.exec(line)
        if (match?.[1]) resolve(match[1])
      })
      child.once('exit', () => reject(new Error('server exited early')))
    })

    const inFlight = fetch(`${address}/slow?ms=1500`)
    await sleep(300)
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    // Connections keep being accepted (and answered) until none arrived for a moment, so that
    // none waiting in the backlog is reset; probes spaced wider than that see the door close.
    let refused = false
    for (let attempt = 0; attempt < 5 && !refused; attempt++) {
      await sleep(300)
      refused = await fetch(`${address}/healthz`).then(
        () => false,
        () => true,
      )
    }
    assert.ok(refused, 'new connections are refused once the backlog is drained, while the in-flight request still runs')
    const response = await inFlight
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { finished: true })

    const [code] = await exited
    assert.equal(code, 0)
    assert.ok(output.includes('closed'), 'the app closed its resources')
  })
})
