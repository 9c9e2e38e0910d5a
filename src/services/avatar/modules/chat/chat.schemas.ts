import { type Static, Type } from '@sinclair/typebox'
import { ACTIONS, EMOTIONS } from '../../expressions.ts'
import { SessionIdSchema } from '../sessions/index.ts'

/** What one chat turn carries, over HTTP and WebSocket alike; `maxTextLength` comes from AVATAR_MAX_TEXT_LENGTH. */
function chatTurnFields(maxTextLength: number) {
  return {
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
  }
}

/** The chat request of POST /v1/chat and /v1/chat/stream. */
export function chatBodySchema(maxTextLength: number) {
  return Type.Object({ sessionId: Type.Optional(SessionIdSchema), ...chatTurnFields(maxTextLength) }, { additionalProperties: true })
}

/**
 * A chat frame on /ws: the HTTP body's fields and rules, with `type` instead of `sessionId`
 * (the socket's session is the one its URL names).
 */
export function chatFrameSchema(maxTextLength: number) {
  return Type.Object({ type: Type.Literal('chat'), ...chatTurnFields(maxTextLength) }, { additionalProperties: true })
}

export type ChatFrame = Static<ReturnType<typeof chatFrameSchema>>

/** The query of the WebSocket handshake. */
export const ChatSocketQuerySchema = Type.Object({ session_id: SessionIdSchema })

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
