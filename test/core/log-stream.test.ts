import assert from 'node:assert/strict'
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createBatchedStream } from '../../src/core/http/log-stream.ts'

describe('batched log stream', () => {
  it('writes every line, in order, in few writes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'triad-log-')), 'out.log')
    const fd = openSync(file, 'a')
    const stream = createBatchedStream(fd, 1024)
    const lines = Array.from({ length: 5000 }, (_, n) => `{"n":${n}}\n`)
    for (const line of lines) stream.write(line)
    for (let wait = 0; wait < 100 && readFileSync(file, 'utf8').length < lines.join('').length; wait++) await sleep(10)
    assert.equal(readFileSync(file, 'utf8'), lines.join(''))
    closeSync(fd)
  })

  it('flushes what is pending synchronously on demand (at process exit)', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'triad-log-')), 'out.log')
    const fd = openSync(file, 'a')
    const stream = createBatchedStream(fd)
    stream.write('last words\n')
    stream.flushSync()
    assert.equal(readFileSync(file, 'utf8'), 'last words\n')
    closeSync(fd)
  })
})
