import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync } from 'node:fs'
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../helpers/free-port.ts'
import { ownSqliteFiles, startTriadProcess } from '../helpers/triad-process.ts'

/**
 * Issue 13 §5: a stop under load loses nothing. Real processes on 127.0.0.1: streams running,
 * a burst sent just before the signal, then SIGTERM (to the server, and to `npm start` as a
 * process manager would): every request answered, every stream finished, nothing left.
 */

const repo = new URL('../..', import.meta.url).pathname
// Speech is not warmed at start: warming is a few seconds of CPU that a loaded machine stretches and these stops do not need.
const STREAM_ENV = { AVATAR_TTS_WARM: 'false', AVATAR_MOCK_TOKEN_DELAY: '60ms', AVATAR_RATE_LIMIT: '0', PAYMENTS_RATE_LIMIT: '0', LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT: '20s' }

interface Answer {
  status?: number
  body: string
  error?: string
}

/** One request on a connection of its own; resolves with its answer or the socket's error. */
function send(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const request = httpRequest(`${base}${path}`, {
      method,
      agent: false,
      headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    })
    request.on('error', (error) => resolve({ body: '', error: (error as NodeJS.ErrnoException).code ?? error.message }))
    request.on('response', (response: IncomingMessage) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode, body: text }))
      response.on('error', (error) => resolve({ status: response.statusCode, body: text, error: error.message }))
    })
    request.end(payload)
  })
}

/** A chat stream: `started` once its first token arrived, `events` the data of every event. */
function openStream(base: string, sessionId: string) {
  let markStarted: () => void = () => {}
  const started = new Promise<void>((resolve) => (markStarted = resolve))
  const finished = (async () => {
    const payload = JSON.stringify({ sessionId, userText: 'Tell me a long story about the sea, please.' })
    const request = httpRequest(`${base}/v1/chat/stream`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    })
    request.end(payload)
    const [response] = (await once(request, 'response')) as [IncomingMessage]
    response.setEncoding('utf8')
    const events: Array<{ type: string; message?: string }> = []
    let buffer = ''
    for await (const text of response as AsyncIterable<string>) {
      buffer += text
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n')
        buffer = buffer.slice(end + 2)
        if (data) events.push(JSON.parse(data))
        markStarted()
      }
    }
    return events
  })()
  return { started, finished }
}

/** The burst: logins, payments-side writes, chats and reads, each on its own connection. */
function burst(base: string, count: number): Array<Promise<Answer>> {
  const kinds = [
    () => send(base, 'POST', '/apps', {}),
    () => send(base, 'GET', '/api/authn/status'),
    () => send(base, 'POST', '/v1/chat', { sessionId: `burst-${Math.random()}`, userText: 'hi' }),
    () => send(base, 'GET', '/healthz'),
  ]
  return Array.from({ length: count }, (_, index) => (kinds[index % kinds.length] as () => Promise<Answer>)())
}

async function refusesConnections(port: number): Promise<boolean> {
  const socket = connect(port, '127.0.0.1')
  try {
    await once(socket, 'connect')
    return false
  } catch {
    return true
  } finally {
    socket.destroy()
  }
}

function assertAllAnswered(answers: Answer[]) {
  const failures = answers.filter((answer) => answer.error !== undefined || answer.status === undefined || answer.status >= 500)
  assert.deepEqual(failures, [], `${failures.length} of ${answers.length} requests were not answered`)
}

describe('a stop under load loses nothing', { skip: ownSqliteFiles }, () => {
  it('SIGTERM to the server: streams finish to done, the burst sent just before is answered, readiness fails, exit 0', async (t) => {
    const server = await startTriadProcess(t, STREAM_ENV)
    const port = Number(new URL(server.base).port)
    const streams = [1, 2, 3].map((n) => openStream(server.base, `stream-${n}`))
    await Promise.all(streams.map((stream) => stream.started))

    const sent = burst(server.base, 40)
    const exited = once(server.child, 'exit')
    server.child.kill('SIGTERM')
    const readiness = await send(server.base, 'GET', '/readyz')

    assertAllAnswered(await Promise.all(sent))
    assert.equal(readiness.status, 503, 'readiness fails once the stop began')
    assert.deepEqual(JSON.parse(readiness.body).error.details, [{ check: 'shutdown', state: 'draining' }])
    for (const stream of streams) {
      const events = await stream.finished
      assert.equal(events.at(-1)?.type, 'done', `a running reply streams to its end: ${JSON.stringify(events.at(-1))}`)
    }
    const [code] = await exited
    assert.equal(code, 0, server.output().slice(-1000))
    assert.ok(await refusesConnections(port), 'nothing is left listening')
  })

  it('a reply still running at the deadline ends with an error event that asks the client to retry', async (t) => {
    const server = await startTriadProcess(t, { ...STREAM_ENV, AVATAR_MOCK_TOKEN_DELAY: '400ms', SHUTDOWN_TIMEOUT: '1s' })
    const stream = openStream(server.base, 'slow')
    await stream.started
    const exited = once(server.child, 'exit')
    server.child.kill('SIGTERM')
    const events = await stream.finished
    const last = events.at(-1)
    assert.equal(last?.type, 'error')
    assert.match(String(last?.message), /send the message again/)
    const [code] = await exited
    assert.equal(code, 0)
  })

  const npmStops = [
    { signal: 'SIGTERM', to: 'npm' },
    { signal: 'SIGINT', to: 'npm' },
    { signal: 'SIGHUP', to: 'npm' },
    // Ctrl-C in a terminal: the whole group, so the server gets it twice (directly, and from npm).
    { signal: 'SIGINT', to: 'group' },
  ] as const
  for (const { signal, to } of npmStops) {
    it(`${signal} to ${to === 'npm' ? 'npm' : 'the whole group (Ctrl-C)'} under \`npm start\` stops the server gracefully, and nothing of its tree is left`, async (t) => {
      const port = await freePort()
      const dir = mkdtempSync(join(tmpdir(), 'triad-npm-start-'))
      const npm = spawn('npm', ['start'], {
        cwd: repo,
        env: { ...process.env, ...STREAM_ENV, PORT: String(port), DATABASE_URL: `sqlite:${join(dir, 't.sqlite')}`, TRIAD_SECRETS_FILE: join(dir, 'secrets.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
        // A process group of its own, as a shell job: the test kills what is left of it at the end.
        detached: true,
      })
      let output = ''
      npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
      t.after(() => {
        try {
          process.kill(-(npm.pid as number), 'SIGKILL')
        } catch {}
      })
      const base = `http://127.0.0.1:${port}`
      for (let attempt = 0; (await send(base, 'GET', '/readyz')).status !== 200; attempt++) {
        assert.ok(attempt < 300 && npm.exitCode === null, `npm start did not serve: ${output.slice(-500)}`)
        await sleep(100)
      }
      const stream = openStream(base, 'npm')
      await stream.started
      const sent = burst(base, 12)
      if (to === 'npm') npm.kill(signal)
      else process.kill(-(npm.pid as number), signal)
      assertAllAnswered(await Promise.all(sent))
      assert.equal((await stream.finished).at(-1)?.type, 'done')
      assert.doesNotMatch(output, /second SIG/, 'one stop, not two')
      for (let attempt = 0; !(await refusesConnections(port)); attempt++) {
        assert.ok(attempt < 300, `the server still listens after ${signal} to npm: ${output.slice(-500)}`)
        await sleep(100)
      }
      // Every process of the group (npm, its shell, the server) has gone.
      for (let attempt = 0; groupAlive(npm.pid as number); attempt++) {
        assert.ok(attempt < 100, `a process of npm's group is left after ${signal}`)
        await sleep(100)
      }
    })
  }
})

function groupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0)
    return true
  } catch {
    return false
  }
}
