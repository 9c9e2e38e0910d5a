import { execFile } from 'node:child_process'
import { accessSync, constants, existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { delimiter, isAbsolute, join } from 'node:path'
import { type AsrProvider, type TranscriptionRequest, TranscriptionError } from './asr.port.ts'
import { decodeToMono } from './decode.ts'
import { openPocketsphinxStream, pocketsphinxDecoders } from './pocketsphinx.stream.ts'
import { decodeWav, encodeWav16, resample } from './wav-decode.ts'

export interface PocketsphinxOptions {
  /** `pocketsphinx_continuous`, by name (searched on PATH) or path. */
  command: string
  /** The en-us model directory of Debian's pocketsphinx-en-us. */
  modelDir: string
  timeoutMs: number
  /** Voice mode recognises as the person speaks, on decoders kept loaded (libpocketsphinx in process). */
  streaming?: boolean
}

const RATE = 16_000

function findExecutable(command: string): string | undefined {
  const candidates = isAbsolute(command) ? [command] : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, command))
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** True when the command and the English model are installed on this machine. */
export function pocketsphinxInstalled(options: Pick<PocketsphinxOptions, 'command' | 'modelDir'>): boolean {
  return (
    findExecutable(options.command) !== undefined && existsSync(join(options.modelDir, 'en-us', 'mdef')) && existsSync(join(options.modelDir, 'en-us.lm.bin'))
  )
}

function run(file: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, signal, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) => {
      if (error) reject(error)
      else resolve(stdout)
    })
  })
}

/**
 * Local English recognition with Debian's pocketsphinx. It needs 16 kHz mono 16-bit WAV:
 * WAV, MP3 and Opus (Ogg or WebM) are decoded here (decode.ts); other formats go through `sox`
 * when the machine's sox can read them (ogg/vorbis, flac…), and are refused otherwise (m4a).
 */
export function createPocketsphinxProvider(options: PocketsphinxOptions): AsrProvider {
  const binary = findExecutable(options.command) ?? options.command
  // Each run is a process that loads a 37 MB model and uses a core: at most one per core at a
  // time, the rest wait their turn instead of thrashing the machine.
  const slots = { free: availableParallelism(), waiting: [] as Array<() => void> }
  const acquire = async () => {
    if (slots.free > 0) slots.free--
    else await new Promise<void>((resolve) => slots.waiting.push(resolve))
  }
  const release = () => {
    const next = slots.waiting.shift()
    if (next) next()
    else slots.free++
  }

  const toRecognizerWav = async (request: TranscriptionRequest, dir: string): Promise<{ path: string; duration: number }> => {
    const target = join(dir, 'in16k.wav')
    const decoded = await decodeToMono(request.audio, request.container).catch(() => undefined)
    if (decoded) {
      const samples = resample(decoded, RATE)
      await writeFile(target, encodeWav16(samples, RATE))
      return { path: target, duration: samples.length / RATE }
    }
    const extension = { Ogg: 'ogg', FLAC: 'flac', 'AIFF-C': 'aifc', AIFF: 'aiff' }[request.container]
    const source = join(dir, `upload.${extension ?? 'bin'}`)
    await writeFile(source, request.audio)
    try {
      await run(
        findExecutable('sox') ?? 'sox',
        [source, '-r', String(RATE), '-c', '1', '-b', '16', '-e', 'signed-integer', target],
        options.timeoutMs,
        request.signal,
      )
    } catch (error) {
      throw new TranscriptionError(
        'unsupported_format',
        `The local recognizer cannot decode ${request.container} audio on this machine; send WAV, or configure AVATAR_ASR_API_KEY for an OpenAI-compatible API that takes it`,
        { cause: error },
      )
    }
    const converted = decodeWav(await readFile(target))
    return { path: target, duration: converted ? converted.samples.length / RATE : 0 }
  }

  const isEnglish = (language: string | undefined) => language === undefined || language === 'en' || language.startsWith('en-')
  return {
    name: 'pocketsphinx',
    stream(language) {
      const decoders = options.streaming && isEnglish(language) ? pocketsphinxDecoders(options.modelDir) : undefined
      return decoders && openPocketsphinxStream(decoders)
    },
    warm: () => (options.streaming ? pocketsphinxDecoders(options.modelDir)?.warm() : undefined),
    status: () => ({
      provider: 'pocketsphinx',
      available: true,
      message: 'Local English recognition (pocketsphinx); set AVATAR_ASR_API_KEY for other languages',
    }),
    async transcribe(request) {
      const language = request.language ?? 'en'
      if (!isEnglish(language)) {
        throw new TranscriptionError(
          'unsupported_language',
          `The local recognizer (pocketsphinx) understands English only, not ${JSON.stringify(language)}; set AVATAR_ASR_API_KEY for an OpenAI-compatible API to recognise other languages`,
        )
      }
      const dir = await mkdtemp(join(tmpdir(), 'triad-asr-'))
      try {
        const { path, duration } = await toRecognizerWav(request, dir)
        let stdout: string
        await acquire()
        try {
          stdout = await run(
            binary,
            [
              '-infile',
              path,
              '-hmm',
              join(options.modelDir, 'en-us'),
              '-lm',
              join(options.modelDir, 'en-us.lm.bin'),
              '-dict',
              join(options.modelDir, 'cmudict-en-us.dict'),
              '-logfn',
              '/dev/null',
            ],
            options.timeoutMs,
            request.signal,
          )
        } catch (error) {
          throw new TranscriptionError('provider_failed', 'the local recognizer failed', { cause: error })
        } finally {
          release()
        }
        // One line per utterance it found.
        const text = stdout
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line.length > 0)
          .join(' ')
        return { text, language: 'en', duration }
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  }
}
