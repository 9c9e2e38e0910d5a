import { type AsrProvider, TranscriptionError } from './asr.port.ts'

export const NOT_CONFIGURED_MESSAGE =
  'Speech recognition is not configured: set AVATAR_ASR_API_KEY (and AVATAR_ASR_BASE_URL for an endpoint other than OpenAI) for an OpenAI-compatible transcription API, or install the pocketsphinx and pocketsphinx-en-us packages for local English recognition.'

/** What runs when no recognizer is available: it says what to configure. */
export function createNoAsrProvider(message = NOT_CONFIGURED_MESSAGE): AsrProvider {
  return {
    name: 'none',
    status: () => ({ provider: 'none', available: false, message }),
    async transcribe() {
      throw new TranscriptionError('provider_failed', message)
    },
  }
}
