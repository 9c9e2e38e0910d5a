import { type Static, Type } from '@sinclair/typebox'

export const ErrorResponse = Type.Object({ detail: Type.String() })

export const TranscriptionResponse = Type.Object({
  text: Type.String(),
  language: Type.String({ description: 'ISO 639-1 code: the one asked for, or the one the transcript is in.' }),
  duration: Type.Number({ description: 'Length of the audio in seconds.' }),
})
export type TranscriptionResponse = Static<typeof TranscriptionResponse>

export const RecognitionStatusResponse = Type.Object({
  provider: Type.String({ description: '`openai`, `pocketsphinx`, or `none`.' }),
  available: Type.Boolean(),
  message: Type.String({ description: 'What runs, or what to configure when nothing does.' }),
})
