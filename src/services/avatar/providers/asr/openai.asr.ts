import OpenAI, { toFile } from 'openai'
import { type AsrProvider, guessLanguage, TranscriptionError } from './asr.port.ts'

export interface OpenAiAsrOptions {
  apiKey: string
  baseUrl?: string
  model: string
  timeoutMs: number
}

/**
 * Any OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI, Groq, a local
 * whisper server…). It takes wav, mp3, ogg, webm, m4a and flac as they are.
 */
export function createOpenAiAsrProvider(options: OpenAiAsrOptions): AsrProvider {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, timeout: options.timeoutMs, maxRetries: 1 })
  return {
    name: 'openai',
    status: () => ({ provider: 'openai', available: true, message: `OpenAI-compatible transcription with ${options.model}` }),
    async transcribe(request) {
      try {
        const result = await client.audio.transcriptions.create(
          {
            file: await toFile(request.audio, request.filename, { type: request.mimeType }),
            model: options.model,
            language: request.language,
            response_format: 'json',
          },
          { signal: request.signal },
        )
        const text = result.text.trim()
        return { text, language: request.language ?? guessLanguage(text) }
      } catch (error) {
        const status = error instanceof OpenAI.APIError && error.status ? ` (HTTP ${error.status})` : ''
        throw new TranscriptionError('provider_failed', `the transcription API failed${status}`, { cause: error })
      }
    },
  }
}
