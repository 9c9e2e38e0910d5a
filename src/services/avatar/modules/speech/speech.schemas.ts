import { type Static, Type } from '@sinclair/typebox'
import type { Readable } from 'node:stream'
import { VISEMES } from './visemes.ts'

export const ErrorResponse = Type.Object({ detail: Type.String() })

// `voice`, `rate` and `format` are checked by the service, which names the accepted values
// in its message; the schema only fixes their types.
export const SpeechBody = Type.Object(
  {
    text: Type.String({ description: 'Text to speak, 1 to 5,000 characters.' }),
    voice: Type.Optional(Type.String({ description: 'A voice id from GET /v1/tts/voices; by default a voice of the text’s language.' })),
    rate: Type.Optional(Type.String({ description: 'Signed percentage from -50% to +100%, e.g. "+20%".', default: '+0%' })),
    format: Type.Optional(Type.String({ description: '`mp3` (audio/mpeg) or `wav` (audio/wav).', default: 'mp3' })),
    visemes: Type.Optional(
      Type.Boolean({
        description: 'true: answer JSON, the audio as base64 with its viseme timeline; false or absent: the audio itself, streamed, with its timeline at GET /v1/tts/{synthesis_id}/visemes.',
        default: false,
      }),
    ),
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

const VisemeSpanSchema = Type.Object({
  viseme: Type.Union(
    VISEMES.map((name) => Type.Literal(name)),
    { description: 'One of the 15 Oculus/Meta lip-sync visemes' },
  ),
  start_ms: Type.Integer({ description: 'from the start of the audio' }),
  end_ms: Type.Integer({ description: 'the next span\'s start_ms; the last one is the audio\'s duration' }),
})

const SynthesisIdSchema = Type.String({ pattern: '^syn_[0-9a-f]{24}$', description: 'a synthesis id (syn_ and 24 hex digits) from the X-Synthesis-Id of a POST /v1/tts answer' })

export const SpeechJson = Type.Object({
  synthesis_id: Type.String(),
  provider: Type.String({ description: 'The provider that really spoke.' }),
  format: Type.String(),
  content_type: Type.String(),
  duration_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'The audio\'s duration; null when the provider reports no timing.' }),
  audio: Type.String({ description: 'The whole audio, base64.' }),
  visemes: Type.Union([Type.Array(VisemeSpanSchema), Type.Null()], { description: 'Contiguous spans from 0 to duration_ms; null when the provider reports no phonemes.' }),
  visemes_unavailable: Type.Optional(Type.String({ description: 'Why visemes is null.' })),
})
export type SpeechJson = Static<typeof SpeechJson>

export const TimelineParams = Type.Object({ synthesis_id: SynthesisIdSchema })

export const TimelineResponse = Type.Object({
  synthesis_id: Type.String(),
  provider: Type.String(),
  duration_ms: Type.Integer(),
  visemes: Type.Array(VisemeSpanSchema),
})
export type TimelineResponse = Static<typeof TimelineResponse>
