import type { AsrProvider, RecognitionStatus, RecognitionStream, TranscriptionRequest } from './asr.port.ts'
import { TranscriptionError } from './asr.port.ts'

/** What the fake's streams were given: the samples of each utterance, and how it ended. */
interface FakeUtterance {
  samples: number
  ended?: 'finished' | 'cancelled'
}

/**
 * A deterministic recognizer for tests: answers `text` and records each request. With
 * `streaming`, voice mode recognises through its streams: a partial is the first word of `text`
 * (or all of it, with `partial: 'whole'`) once any audio came, the end gives `text`.
 */
export function createFakeAsrProvider(
  options: { text?: string; status?: RecognitionStatus; fail?: boolean; streaming?: boolean; partial?: 'first word' | 'whole' } = {},
): AsrProvider & { requests: TranscriptionRequest[]; utterances: FakeUtterance[] } {
  const requests: TranscriptionRequest[] = []
  const utterances: FakeUtterance[] = []
  const text = options.text ?? 'hello avatar'
  const stream = (): RecognitionStream => {
    const utterance: FakeUtterance = { samples: 0 }
    utterances.push(utterance)
    return {
      push: (samples) => void (utterance.samples += samples.length),
      partial: async () => (utterance.samples === 0 ? '' : options.partial === 'whole' ? text : text.split(' ')[0]),
      async finish() {
        utterance.ended = 'finished'
        if (options.fail) throw new TranscriptionError('provider_failed', 'the fake recognizer was told to fail')
        return text
      },
      cancel: () => void (utterance.ended = 'cancelled'),
    }
  }
  return {
    name: 'fake',
    requests,
    utterances,
    status: () => options.status ?? { provider: 'fake', available: true, message: 'fake recognizer' },
    async transcribe(request) {
      requests.push(request)
      if (options.fail) throw new TranscriptionError('provider_failed', 'the fake recognizer was told to fail')
      return { text, language: request.language ?? 'en' }
    },
    ...(options.streaming ? { stream } : {}),
  }
}
