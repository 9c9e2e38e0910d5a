import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { buildTestApp, engineIndependent } from '../../../helpers/build-app.ts'
import { postAsr } from '../helpers.ts'

// The local provider's contract with pocketsphinx_continuous, checked with a stand-in script:
// the arguments it gets, the 16 kHz mono WAV it reads, how its output becomes the text, and that
// no more runs than cores happen at once. (The real program is exercised where it is installed.)
function standIn(dir: string, exitCode = 0) {
  const model = join(dir, 'model')
  mkdirSync(join(model, 'en-us'), { recursive: true })
  writeFileSync(join(model, 'en-us', 'mdef'), '')
  writeFileSync(join(model, 'en-us.lm.bin'), '')
  const log = join(dir, 'runs.log')
  const command = join(dir, 'pocketsphinx_continuous')
  writeFileSync(
    command,
    `#!/bin/sh
echo "start $(date +%s%N) $*" >> ${log}
# The input it is given: RIFF header fields as hex (channels, sample rate, bits), written as one
# line in one append, so that runs at once cannot interleave within it.
fields=$(od -An -tx1 -j22 -N14 "$2" | tr -d ' \\n')
echo "$fields" >> ${log}
sleep 0.4
echo "end $(date +%s%N)" >> ${log}
echo "hello world"
echo "second utterance"
exit ${exitCode}
`,
  )
  chmodSync(command, 0o755)
  return { env: { AVATAR_ASR_PROVIDER: 'pocketsphinx', AVATAR_ASR_POCKETSPHINX_COMMAND: command, AVATAR_ASR_POCKETSPHINX_MODEL: model }, log, model }
}

/** A WAV of `seconds` of silence at 44.1 kHz stereo: something to resample and mix down. */
function stereoWav(seconds: number): Uint8Array {
  const frames = Math.round(44100 * seconds)
  const out = Buffer.alloc(44 + frames * 4)
  out.write('RIFF', 0, 'latin1')
  out.writeUInt32LE(36 + frames * 4, 4)
  out.write('WAVEfmt ', 8, 'latin1')
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(2, 22)
  out.writeUInt32LE(44100, 24)
  out.writeUInt32LE(44100 * 4, 28)
  out.writeUInt16LE(4, 32)
  out.writeUInt16LE(16, 34)
  out.write('data', 36, 'latin1')
  out.writeUInt32LE(frames * 4, 40)
  return new Uint8Array(out)
}

describe('the local recognizer, with a stand-in for pocketsphinx_continuous', { skip: engineIndependent }, () => {
  it('gives it 16 kHz mono 16-bit WAV with the model, joins its lines, and runs at most one per core at once', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'asr-standin-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const { env, log, model } = standIn(dir)
    const { app } = await buildTestApp(t, { services: ['avatar'], env })
    const count = availableParallelism() + 2
    const responses = await Promise.all(Array.from({ length: count }, () => postAsr(app, { file: { bytes: stereoWav(1.5), name: 'a.wav', type: 'audio/wav' } })))
    for (const response of responses) {
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(response.json(), { text: 'hello world second utterance', language: 'en', duration: 1.5 })
    }
    const lines = readFileSync(log, 'utf8').trim().split('\n')
    const starts = lines.filter((line) => line.startsWith('start')).map((line) => line.split(' '))
    assert.equal(starts.length, count)
    const [, , ...args] = starts[0]
    assert.deepEqual(
      [args[0], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9]],
      ['-infile', '-hmm', join(model, 'en-us'), '-lm', join(model, 'en-us.lm.bin'), '-dict', join(model, 'cmudict-en-us.dict'), '-logfn', '/dev/null'],
    )
    // Channels 1, 16,000 Hz, 32,000 bytes/s, block 2, 16 bits.
    assert.ok(lines.includes('0100803e0000007d000002001000'), lines.join('\n'))
    // Overlap: never more runs at once than cores.
    const events = lines
      .filter((line) => line.startsWith('start') || line.startsWith('end'))
      .map((line) => ({ at: BigInt(line.split(' ')[1]), delta: line.startsWith('start') ? 1 : -1 }))
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.delta - b.delta))
    let running = 0
    let most = 0
    for (const event of events) {
      running += event.delta
      most = Math.max(most, running)
    }
    // Timing decides how many of the runs overlap; the guarantees are the bound and that runs
    // do overlap (they are not queued one by one).
    assert.ok(most <= availableParallelism(), `${most} runs at once on ${availableParallelism()} cores`)
    assert.ok(most >= Math.min(2, availableParallelism()), `only ${most} run at once`)
  })

  it('answers 502 {detail} when the recognizer fails', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'asr-standin-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const { app } = await buildTestApp(t, { services: ['avatar'], env: standIn(dir, 3).env })
    const response = await postAsr(app, { file: { bytes: stereoWav(0.5), name: 'a.wav', type: 'audio/wav' } })
    assert.equal(response.statusCode, 502)
    assert.equal(response.json().detail, 'Speech recognition failed: the local recognizer failed')
  })
})
