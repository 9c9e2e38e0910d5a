/** The avatar's facial expressions, as the spec lists them. */
export const EMOTIONS = ['neutral', 'happy', 'surprised', 'sad', 'angry'] as const
export type Emotion = (typeof EMOTIONS)[number]

/** The avatar's gestures, as the spec lists them. */
export const ACTIONS = ['idle', 'wave', 'greet', 'think', 'nod', 'shakeHead', 'dance', 'speak'] as const
export type Action = (typeof ACTIONS)[number]
