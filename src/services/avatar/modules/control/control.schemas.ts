import { type Static, Type } from '@sinclair/typebox'
import { ACTIONS, EMOTIONS } from '../../expressions.ts'
import { VOICES } from '../../providers/tts/index.ts'

const EmotionSchema = Type.Union(
  EMOTIONS.map((value) => Type.Literal(value)),
  { description: 'the face to show' },
)
const ActionSchema = Type.Union(
  ACTIONS.map((value) => Type.Literal(value)),
  { description: 'the gesture to play' },
)

export function sayBodySchema(maxTextLength: number) {
  return Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: maxTextLength, description: `What the avatar says now, 1 to ${maxTextLength} characters (AVATAR_MAX_TEXT_LENGTH); no model is asked.` }),
      emotion: Type.Optional({ ...EmotionSchema, default: 'neutral' }),
      action: Type.Optional({ ...ActionSchema, default: 'speak' }),
      voice: Type.Optional(
        Type.Union(
          VOICES.map((voice) => Type.Literal(voice.id)),
          { description: 'A voice of GET /v1/tts/voices; by default the page picks one for the text' },
        ),
      ),
    },
    { additionalProperties: false },
  )
}
export type SayBody = Static<ReturnType<typeof sayBodySchema>>

export const ActBody = Type.Object(
  {
    emotion: Type.Optional(EmotionSchema),
    action: Type.Optional(ActionSchema),
  },
  { additionalProperties: false },
)
export type ActBody = Static<typeof ActBody>

/** What every page showing the session receives (an SSE `data` field, or a WebSocket text frame). */
const ControlEventSchema = Type.Union([
  Type.Object({
    type: Type.Literal('say'),
    id: Type.String({ description: 'unique per message' }),
    text: Type.String(),
    emotion: EmotionSchema,
    action: ActionSchema,
    voice: Type.Optional(Type.String()),
    at: Type.String({ description: 'ISO 8601' }),
  }),
  Type.Object({
    type: Type.Literal('act'),
    id: Type.String(),
    emotion: Type.Optional(EmotionSchema),
    action: Type.Optional(ActionSchema),
    at: Type.String(),
  }),
])
export type ControlEvent = Static<typeof ControlEventSchema>

export const SentSchema = Type.Object({
  delivered: Type.Literal(true, { description: 'published to every page showing the session, on every instance' }),
  event: ControlEventSchema,
})
