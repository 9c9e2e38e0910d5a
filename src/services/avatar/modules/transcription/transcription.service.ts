import { parseBuffer } from 'music-metadata'
import type { AppError } from '../../../../core/errors/app-error.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { type AsrProvider, type RecognitionStatus, TranscriptionError } from '../../providers/asr/index.ts'
import type { TranscriptionResponse } from './transcription.schemas.ts'
import { avatarError } from '../../errors.ts'
import { type AvatarMetrics, noAvatarMetrics } from '../../metrics.ts'

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024

/** The accepted kind of a container as music-metadata names it (`WAVE`, `EBML/webm`, `M4A/isom/iso2`…). */
function acceptedKind(container: string): string | undefined {
  if (container === 'WAVE') return 'wav'
  if (container === 'MPEG') return 'mp3'
  if (container === 'Ogg') return 'ogg'
  if (container === 'FLAC') return 'flac'
  if (container.startsWith('EBML')) return 'webm'
  if (/^(M4A|MPEG-4|mp4|isom|mp42)/i.test(container)) return 'm4a'
  return undefined
}
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/

export interface Upload {
  buffer: Buffer
  filename: string
  mimeType: string
}

export interface TranscriptionService {
  status(): RecognitionStatus
  /** Refuses early (503) when nothing can recognise speech, before the upload is read. */
  assertAvailable(): void
  transcribe(upload: Upload | undefined, language: string | undefined, signal?: AbortSignal): Promise<TranscriptionResponse>
}

function invalid(message: string): AppError {
  return coreError('validation_failed', message)
}

export function createTranscriptionService(deps: { provider: AsrProvider; metrics?: AvatarMetrics }): TranscriptionService {
  const { provider } = deps
  const metrics = deps.metrics ?? noAvatarMetrics
  return {
    status: () => provider.status(),

    assertAvailable() {
      const status = provider.status()
      if (!status.available) throw coreError('service_unavailable', status.message)
    },

    async transcribe(upload, rawLanguage, signal) {
      if (!upload) throw invalid('file is required: send the audio as the multipart/form-data field "file"')
      if (upload.buffer.length === 0) throw invalid('file is empty')
      const language = rawLanguage?.trim() ? rawLanguage.trim() : undefined
      if (language !== undefined && !LANGUAGE.test(language))
        throw invalid(`language must be a language code such as "en" or "zh" (got ${JSON.stringify(language)})`)

      let container: string
      let metadataDuration: number | undefined
      try {
        const metadata = await parseBuffer(upload.buffer, { mimeType: upload.mimeType, size: upload.buffer.length }, { duration: true, skipCovers: true })
        container = metadata.format.container ?? ''
        metadataDuration = metadata.format.duration
      } catch {
        throw invalid('file is not audio in a readable format (accepted: wav, mp3, ogg/opus, webm, m4a, flac)')
      }
      if (!container) throw invalid('file is not audio in a readable format (accepted: wav, mp3, ogg/opus, webm, m4a, flac)')
      const kind = acceptedKind(container)
      if (!kind) throw invalid(`file is ${container} audio; accepted formats: wav, mp3, ogg/opus, webm, m4a, flac`)

      const job = metrics.speechJob('asr')
      try {
        const result = await provider.transcribe({
          audio: upload.buffer,
          filename: upload.filename || `audio.${kind}`,
          mimeType: upload.mimeType,
          container,
          language: language?.toLowerCase(),
          signal,
        })
        const duration = result.duration ?? metadataDuration ?? 0
        job.done('ok', duration)
        return { text: result.text, language: result.language, duration: Math.round(duration * 1000) / 1000 }
      } catch (error) {
        job.done('error')
        if (!(error instanceof TranscriptionError)) throw error
        if (error.kind === 'unsupported_language') throw invalid(error.message)
        if (error.kind === 'unsupported_format') throw coreError('unsupported_media_type', error.message)
        throw avatarError('recognition_failed', `Speech recognition failed: ${error.message}`, { cause: error })
      }
    },
  }
}
