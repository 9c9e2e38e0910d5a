import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { chromiumSkipReason, launchChromium } from '../../../helpers/browser.ts'
import { webmOpus } from '../../../../src/services/avatar/providers/asr/decode.ts'
import { pocketsphinxInstalled } from '../../../../src/services/avatar/providers/asr/pocketsphinx.asr.ts'
import { buildTestApp, engineIndependent } from '../../../helpers/build-app.ts'
import { postAsr } from '../helpers.ts'
import { fakeOpenAi } from './fake-transcription-server.ts'

// Recordings as browsers really make them (MediaRecorder, from Chromium's fake microphone),
// since no encoder for WebM/Opus or MP4 ships with the machine.
const recordings = new Map<string, Buffer>()
let browser: Browser | undefined

interface RecorderGlobals {
  MediaRecorder: { isTypeSupported(type: string): boolean; new (stream: unknown, options: { mimeType: string }): RecorderLike }
  navigator: { mediaDevices: { getUserMedia(constraints: { audio: boolean }): Promise<{ getTracks(): Array<{ stop(): void }> }> } }
  Blob: new (parts: unknown[]) => { arrayBuffer(): Promise<ArrayBuffer> }
  btoa(data: string): string
}
interface RecorderLike {
  ondataavailable: (event: { data: unknown }) => void
  onstop: () => void
  start(): void
  stop(): void
}

before(async () => {
  if (engineIndependent || chromiumSkipReason()) return
  browser = await launchChromium([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
    ])
  // A secure context is needed for the microphone: any page of a local server will do.
  const { app } = await buildTestApp({ after: (fn) => after(fn) }, { services: ['avatar'] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  assert.ok(address && typeof address === 'object')
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${address.port}/avatar`)
  for (const type of ['audio/webm;codecs=opus', 'audio/mp4']) {
    const base64 = await page.evaluate(async (mimeType) => {
      const g = globalThis as unknown as RecorderGlobals
      if (!g.MediaRecorder.isTypeSupported(mimeType)) return null
      const stream = await g.navigator.mediaDevices.getUserMedia({ audio: true })
      const recorder = new g.MediaRecorder(stream, { mimeType })
      const parts: unknown[] = []
      recorder.ondataavailable = (event) => parts.push(event.data)
      const stopped = new Promise<void>((resolve) => {
        recorder.onstop = resolve
      })
      recorder.start()
      await new Promise((resolve) => setTimeout(resolve, 1200))
      recorder.stop()
      await stopped
      for (const track of stream.getTracks()) track.stop()
      const bytes = new Uint8Array(await new g.Blob(parts).arrayBuffer())
      let binary = ''
      for (const byte of bytes) binary += String.fromCharCode(byte)
      return g.btoa(binary)
    }, type)
    if (base64) recordings.set(type.split(';')[0], Buffer.from(base64, 'base64'))
  }
  await page.close()
})
after(() => browser?.close())

/** A minimal Ogg stream of `packets`, one page each (CRCs left at zero: nothing here checks them). */
function oggOf(packets: Uint8Array[]): Buffer {
  return Buffer.concat(
    packets.map((packet, index) => {
      const lacing = [...Array(Math.floor(packet.length / 255)).fill(255), packet.length % 255]
      const header = Buffer.alloc(27)
      header.write('OggS', 0, 'latin1')
      header[5] = index === 0 ? 2 : index === packets.length - 1 ? 4 : 0
      header.writeUInt32LE(1, 14)
      header.writeUInt32LE(index, 18)
      header[26] = lacing.length
      return Buffer.concat([header, Buffer.from(lacing), packet])
    }),
  )
}

describe('browser recordings', { skip: engineIndependent || chromiumSkipReason() }, () => {
  it('accepts WebM/Opus as the API takes it, with its duration in seconds', async (t) => {
    const webm = recordings.get('audio/webm')
    assert.ok(webm, 'Chromium recorded WebM')
    const fake = await fakeOpenAi(t, { status: 200, body: { text: 'beep' } })
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_ASR_API_KEY: 'sk-test', AVATAR_ASR_BASE_URL: fake.baseUrl } })
    const response = await postAsr(app, { file: { bytes: new Uint8Array(webm), name: 'speech.webm', type: 'audio/webm' } })
    assert.equal(response.statusCode, 200, response.body)
    assert.ok(response.json().duration > 0.9 && response.json().duration < 1.6, `${response.json().duration} s`)
    assert.equal(fake.seen[0].bytes, webm.length)
  })

  it('accepts MP4 audio (m4a) as the API takes it', async (t) => {
    const mp4 = recordings.get('audio/mp4')
    if (!mp4) {
      t.skip('this Chromium cannot record MP4 audio')
      return
    }
    const fake = await fakeOpenAi(t, { status: 200, body: { text: 'beep' } })
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_ASR_API_KEY: 'sk-test', AVATAR_ASR_BASE_URL: fake.baseUrl } })
    const response = await postAsr(app, { file: { bytes: new Uint8Array(mp4), name: 'speech.m4a', type: 'audio/mp4' } })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(typeof response.json().duration, 'number')
    assert.equal(fake.seen[0].filename, 'speech.m4a')
  })

  const local = { skip: !pocketsphinxInstalled({ command: 'pocketsphinx_continuous', modelDir: '/usr/share/pocketsphinx/model/en-us' }) && 'no pocketsphinx' }

  it('decodes WebM/Opus for the local recognizer', local, async (t) => {
    const webm = recordings.get('audio/webm')
    assert.ok(webm)
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const response = await postAsr(app, { file: { bytes: new Uint8Array(webm), name: 'speech.webm', type: 'audio/webm' } })
    assert.equal(response.statusCode, 200, response.body)
    assert.ok(response.json().duration > 0.9 && response.json().duration < 1.6, `${response.json().duration} s`)
  })

  it('decodes Ogg/Opus for the local recognizer', local, async (t) => {
    const webm = recordings.get('audio/webm')
    assert.ok(webm)
    const track = webmOpus(webm)
    assert.ok(track)
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const ogg = oggOf([track.head, Buffer.from('OpusTags\0\0\0\0\0\0\0\0'), ...track.frames])
    const response = await postAsr(app, { file: { bytes: new Uint8Array(ogg), name: 'speech.opus', type: 'audio/ogg' } })
    assert.equal(response.statusCode, 200, response.body)
    assert.ok(response.json().duration > 0.9 && response.json().duration < 1.6, `${response.json().duration} s`)
  })

  it('answers 415 naming WAV for MP4 audio, which the local recognizer cannot decode here', local, async (t) => {
    const mp4 = recordings.get('audio/mp4')
    if (!mp4) {
      t.skip('this Chromium cannot record MP4 audio')
      return
    }
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const response = await postAsr(app, { file: { bytes: new Uint8Array(mp4), name: 'speech.m4a', type: 'audio/mp4' } })
    assert.equal(response.statusCode, 415, response.body)
    assert.match(response.json().detail, /cannot decode .* audio on this machine; send WAV/)
  })
})
