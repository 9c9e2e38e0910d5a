import { type Action, ACTIONS, type Emotion, EMOTIONS } from '../../expressions.ts'

export { type Action, ACTIONS, type Emotion, EMOTIONS } from '../../expressions.ts'

// Models write `Happy`, `shake_head` or `shake-head`; compare on letters only.
const squash = (value: string) => value.toLowerCase().replace(/[^a-z]/g, '')
const EMOTION_BY_KEY = new Map<string, Emotion>(EMOTIONS.map((value) => [squash(value), value]))
const ACTION_BY_KEY = new Map<string, Action>(ACTIONS.map((value) => [squash(value), value]))

/** The emotion a model meant, or undefined when the word is not one of ours. */
export function toEmotion(value: string | undefined): Emotion | undefined {
  return value === undefined ? undefined : EMOTION_BY_KEY.get(squash(value))
}

/** The action a model meant, or undefined when the word is not one of ours. */
export function toAction(value: string | undefined): Action | undefined {
  return value === undefined ? undefined : ACTION_BY_KEY.get(squash(value))
}

export interface ChatReply {
  replyText: string
  emotion: Emotion
  action: Action
}
