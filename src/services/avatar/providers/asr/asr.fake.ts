import type { AsrProvider, RecognitionStatus, TranscriptionRequest } from './asr.port.ts'
import { TranscriptionError } from './asr.port.ts'

/** A deterministic recognizer for tests: answers `text` and records each request. */
export function createFakeAsrProvider(
  options: { text?: string; status?: RecognitionStatus; fail?: boolean } = {},
): AsrProvider & { requests: TranscriptionRequest[] } {
  const requests: TranscriptionRequest[] = []
  return {
    name: 'fake',
    requests,
    status: () => options.status ?? { provider: 'fake', available: true, message: 'fake recognizer' },
    async transcribe(request) {
      requests.push(request)
      if (options.fail) throw new TranscriptionError('provider_failed', 'the fake recognizer was told to fail')
      return { text: options.text ?? 'hello avatar', language: request.language ?? 'en' }
    },
  }
}
