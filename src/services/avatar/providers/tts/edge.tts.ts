import { createHash, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Clock } from '../../../../core/clock.ts'
import { splitIntoSegments } from './segments.ts'
import { type ProviderStatus, SynthesisError, type SynthesisRequest, type SynthesisStream, type TtsProvider } from './tts.port.ts'

// The public constants of Microsoft Edge's "read aloud" feature, as every Edge TTS client
// sends them; the service refuses connections without the time-based Sec-MS-GEC token.
const TRUSTED_CLIENT_TOKEN = '6A5AA1D4EAFF4E9FB37E23D68491D6F4'
const CHROMIUM_VERSION = '130.0.2849.68'
const WINDOWS_EPOCH_OFFSET_S = 11_644_473_600
const OUTPUT_FORMAT = 'audio-24khz-48kbitrate-mono-mp3'
/** After a failed attempt, go straight to the local voices for this long. */
const RETRY_AFTER_MS = 60_000
const SEGMENT_CHARS = 1000

export interface EdgeOptions {
  url: string
  timeoutMs: number
  /** The local provider used when Edge cannot be reached, and for WAV (Edge sends MP3). */
  fallback: TtsProvider
  clock?: Clock
}

/** The Sec-MS-GEC token: SHA-256 of the Windows file time, rounded down to 5 minutes, and the client token. */
function secMsGec(now: Date): string {
  const seconds = Math.floor(now.getTime() / 1000) + WINDOWS_EPOCH_OFFSET_S
  const ticks = BigInt(seconds - (seconds % 300)) * 10_000_000n
  return createHash('sha256').update(`${ticks}${TRUSTED_CLIENT_TOKEN}`, 'ascii').digest('hex').toUpperCase()
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/**
 * Microsoft Edge neural voices over Edge's read-aloud WebSocket. When Edge cannot be reached
 * (no network, refused, too slow to send its first audio) the request is spoken by the local
 * provider instead, and for a minute after that every request is, so that an offline machine
 * does not wait for a timeout on each request; `status()` reports which one really runs.
 */
export function createEdgeProvider(options: EdgeOptions): TtsProvider {
  const clock = options.clock ?? { now: () => new Date() }
  let lastFailure: { at: number; reason: string } | undefined
  let lastProbe: number | undefined

  const unreachable = () => lastFailure !== undefined && clock.now().getTime() - lastFailure.at < RETRY_AFTER_MS

  const connect = (): Promise<WebSocket> =>
    new Promise((resolve, reject) => {
      const url = `${options.url}?TrustedClientToken=${TRUSTED_CLIENT_TOKEN}&Sec-MS-GEC=${secMsGec(clock.now())}&Sec-MS-GEC-Version=1-${CHROMIUM_VERSION}&ConnectionId=${randomUUID().replaceAll('-', '')}`
      const socket = new WebSocket(url, {
        headers: {
          Origin: 'chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold',
          'User-Agent': `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/${CHROMIUM_VERSION}`,
          Pragma: 'no-cache',
          'Cache-Control': 'no-cache',
        },
      } as unknown as string[])
      socket.binaryType = 'arraybuffer'
      const timer = setTimeout(() => {
        socket.close()
        reject(new Error(`no connection within ${options.timeoutMs} ms`))
      }, options.timeoutMs)
      socket.onopen = () => {
        clearTimeout(timer)
        resolve(socket)
      }
      socket.onerror = () => {
        clearTimeout(timer)
        reject(new Error('connection failed'))
      }
    })

  /** Speaks one segment on its own connection, yielding MP3 as it arrives. */
  async function* speakSegment(request: SynthesisRequest, text: string): AsyncGenerator<Uint8Array> {
    const socket = await connect()
    const audio = new Readable({ objectMode: true, read() {} })
    let done = false
    socket.onmessage = (event: MessageEvent) => {
      if (typeof event.data === 'string') {
        if (event.data.includes('Path:turn.end')) {
          done = true
          audio.push(null)
        }
      } else {
        const bytes = new Uint8Array(event.data as ArrayBuffer)
        const headerLength = (bytes[0] << 8) | bytes[1]
        const headers = new TextDecoder().decode(bytes.subarray(2, 2 + headerLength))
        if (headers.includes('Path:audio') && bytes.length > 2 + headerLength) audio.push(bytes.subarray(2 + headerLength))
      }
    }
    socket.onclose = () => {
      if (!done) audio.destroy(new Error('Edge closed the connection before the end of the audio'))
    }
    const stamp = clock.now().toUTCString()
    socket.send(
      `X-Timestamp:${stamp}\r\nContent-Type:application/json; charset=utf-8\r\nPath:speech.config\r\n\r\n` +
        `{"context":{"synthesis":{"audio":{"metadataoptions":{"sentenceBoundaryEnabled":"false","wordBoundaryEnabled":"false"},"outputFormat":"${OUTPUT_FORMAT}"}}}}\r\n`,
    )
    const [language, region, name] = request.voice.id.split('-')
    const rate = `${request.ratePercent >= 0 ? '+' : ''}${request.ratePercent}%`
    socket.send(
      `X-RequestId:${randomUUID().replaceAll('-', '')}\r\nContent-Type:application/ssml+xml\r\nX-Timestamp:${stamp}\r\nPath:ssml\r\n\r\n` +
        `<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='${language}-${region}'>` +
        `<voice name='Microsoft Server Speech Text to Speech Voice (${language}-${region}, ${name})'>` +
        `<prosody pitch='+0Hz' rate='${rate}' volume='+0%'>${escapeXml(text)}</prosody></voice></speak>`,
    )
    const onAbort = () => socket.close()
    request.signal?.addEventListener('abort', onAbort)
    try {
      yield* audio
    } finally {
      request.signal?.removeEventListener('abort', onAbort)
      socket.close()
    }
  }

  return {
    name: 'edge',
    async status(): Promise<ProviderStatus> {
      // Probe Edge at most once a minute, so that listing voices does not open a connection each time.
      const now = clock.now().getTime()
      if (!unreachable() && (lastProbe === undefined || now - lastProbe >= RETRY_AFTER_MS)) {
        lastProbe = now
        try {
          ;(await connect()).close()
          lastFailure = undefined
        } catch (error) {
          lastFailure = { at: now, reason: (error as Error).message }
        }
      }
      if (lastFailure && unreachable()) {
        return {
          provider: options.fallback.name,
          available: true,
          message: `Edge voices unreachable (${lastFailure.reason}); speaking with local ${options.fallback.name}`,
        }
      }
      return { provider: 'edge', available: true }
    },

    async synthesize(request: SynthesisRequest): Promise<SynthesisStream> {
      if (request.format !== 'mp3' || unreachable()) return options.fallback.synthesize(request)
      const segments = splitIntoSegments(request.text, SEGMENT_CHARS, SEGMENT_CHARS)
      async function* all(): AsyncGenerator<Uint8Array> {
        for (const segment of segments) yield* speakSegment(request, segment)
      }
      const iterator = all()
      let first: IteratorResult<Uint8Array>
      try {
        first = await Promise.race([
          iterator.next(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no audio within ${options.timeoutMs} ms`)), options.timeoutMs).unref()),
        ])
        if (first.done) throw new Error('Edge sent no audio')
      } catch (error) {
        await iterator.return(undefined).catch(() => {})
        lastFailure = { at: clock.now().getTime(), reason: (error as Error).message }
        return options.fallback.synthesize(request)
      }
      async function* rest(): AsyncGenerator<Uint8Array> {
        yield first.value as Uint8Array
        try {
          yield* { [Symbol.asyncIterator]: () => iterator }
        } catch (error) {
          throw new SynthesisError('Edge failed mid-stream', { cause: error })
        }
      }
      return { provider: 'edge', chunks: rest() }
    },

    // The local fallback speaks whenever Edge cannot: it is warmed like a provider of its own.
    ready: () => options.fallback.ready?.() ?? Promise.resolve(),

    async close() {
      await options.fallback.close()
    },
  }
}
