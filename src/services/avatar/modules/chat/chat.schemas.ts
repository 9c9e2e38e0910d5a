import { type Static, Type } from '@sinclair/typebox'
import { ACTIONS, EMOTIONS } from '../../expressions.ts'
import { SessionIdSchema } from '../sessions/index.ts'

/** The chat request; `maxTextLength` comes from AVATAR_MAX_TEXT_LENGTH. */
export function chatBodySchema(maxTextLength: number) {
  return Type.Object(
    {
      sessionId: Type.Optional(SessionIdSchema),
      userText: Type.String({ minLength: 1, maxLength: maxTextLength, description: `the user's message, 1 to ${maxTextLength} characters` }),
      meta: Type.Optional(
        Type.Object(
          {
            characterId: Type.Optional(
              Type.String({
                description:
                  'the character to play (assistant, advisor, companion, service, their aliases lively-assistant, serious-advisor, cute-companion, pro-service, or an operator-defined one); an unknown id gets the default character and an X-Avatar-Persona-Unknown header',
              }),
            ),
          },
          { additionalProperties: true, description: 'extra context; every key other than characterId is passed to the model' },
        ),
      ),
    },
    { additionalProperties: true },
  )
}

export type ChatBody = Static<ReturnType<typeof chatBodySchema>>

export const ChatReplySchema = Type.Object({
  replyText: Type.String(),
  emotion: Type.Union(
    EMOTIONS.map((value) => Type.Literal(value)),
    { description: EMOTIONS.join(', ') },
  ),
  action: Type.Union(
    ACTIONS.map((value) => Type.Literal(value)),
    { description: ACTIONS.join(', ') },
  ),
})
