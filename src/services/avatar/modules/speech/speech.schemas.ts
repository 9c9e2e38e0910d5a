import { type Static, Type } from '@sinclair/typebox'
import type { Readable } from 'node:stream'

export const ErrorResponse = Type.Object({ detail: Type.String() })

// `voice`, `rate` and `format` are checked by the service, which names the accepted values
// in its message; the schema only fixes their types.
export const SpeechBody = Type.Object(
  {
    text: Type.String({ description: 'Text to speak, 1 to 5,000 characters.' }),
    voice: Type.Optional(Type.String({ description: 'A voice id from GET /v1/tts/voices; by default a voice of the text’s language.' })),
    rate: Type.Optional(Type.String({ description: 'Signed percentage from -50% to +100%, e.g. "+20%".', default: '+0%' })),
    format: Type.Optional(Type.String({ description: '`mp3` (audio/mpeg) or `wav` (audio/wav).', default: 'mp3' })),
  },
  { additionalProperties: false },
)
export type SpeechBody = Static<typeof SpeechBody>

export const AudioResponse = Type.Unsafe<Readable>({
  type: 'string',
  format: 'binary',
  description: 'The audio, streamed as it is synthesised (audio/mpeg or audio/wav).',
})

const VoiceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  locale: Type.String(),
  gender: Type.Union([Type.Literal('Female'), Type.Literal('Male')]),
})

export const VoicesResponse = Type.Object({
  provider: Type.String({ description: 'The provider that synthesis really uses now.' }),
  available: Type.Boolean(),
  message: Type.Optional(Type.String({ description: 'Why the configured provider is not the one in use.' })),
  voices: Type.Array(VoiceSchema),
})
export type VoicesResponse = Static<typeof VoicesResponse>
