import { type Action, type Emotion, toAction, toEmotion } from './chat.constants.ts'

/**
 * The marker protocol (docs/avatar-protocol.md): the model writes `[emotion:happy]` and
 * `[action:wave]` (or both in one bracket, `[emotion:happy, action:wave]`) anywhere in its
 * reply, preferably first. This filter takes the model's text piece by piece as it streams,
 * removes every marker, even one split across pieces, and passes the rest on unchanged
 * except for whitespace: none at the start or end, and the whitespace around a removed
 * marker collapses to the first run.
 */

/** Longest text held back while deciding whether a `[` opens a marker. */
const MAX_MARKER_LENGTH = 80

// A prefix of `[emotion` or `[action` (letters typed so far), optionally after spaces.
const HEAD_PREFIX = /^\[\s*(?:e(?:m(?:o(?:t(?:i(?:o(?:n)?)?)?)?)?)?|a(?:c(?:t(?:i(?:o(?:n)?)?)?)?)?)?$/i
const HEAD_DONE = /^\[\s*(?:emotion|action)\s*$/i
const BODY = /^\[\s*(?:emotion|action)\s*[:=：][^[\]\n]*$/i
const PAIR = /(emotion|action)\s*[:=：]\s*([A-Za-z_-]+)/gi

function couldBeMarker(buffer: string): boolean {
  if (buffer.length > MAX_MARKER_LENGTH) return false
  return HEAD_PREFIX.test(buffer) || HEAD_DONE.test(buffer) || BODY.test(buffer)
}

export interface MarkerResult {
  /** The last valid emotion the markers named, if any. */
  emotion?: Emotion
  action?: Action
  /** True when at least one marker (valid or not) was found. */
  sawMarker: boolean
}

export class MarkerFilter {
  #buffer = ''
  #pendingSpace = ''
  #started = false
  #afterMarker = false
  #result: MarkerResult = { sawMarker: false }

  /** Feeds the next piece of model text; returns the visible text it releases (maybe empty). */
  push(piece: string): string {
    let out = ''
    for (const char of piece) out += this.#feed(char)
    return out
  }

  /** Ends the text: releases what is still held back and returns it. */
  end(): string {
    const held = this.#buffer
    this.#buffer = ''
    // An unclosed `[emotion:…` at the very end is a broken marker: drop it rather than show it.
    if (held && !BODY.test(held)) {
      let out = this.#visible('[')
      for (const char of held.slice(1)) out += this.#feed(char)
      return out + this.end()
    }
    if (held) this.#acceptMarker(held)
    this.#pendingSpace = ''
    return ''
  }

  get result(): MarkerResult {
    return this.#result
  }

  #visible(text: string): string {
    const out = (this.#started ? this.#pendingSpace : '') + text
    this.#pendingSpace = ''
    this.#started = true
    this.#afterMarker = false
    return out
  }

  #feed(char: string): string {
    if (this.#buffer) {
      const candidate = this.#buffer + char
      if (char === ']' && BODY.test(this.#buffer)) {
        this.#buffer = ''
        this.#acceptMarker(candidate)
        return ''
      }
      if (couldBeMarker(candidate)) {
        this.#buffer = candidate
        return ''
      }
      // Not a marker after all: the `[` is text, and what followed it is read again, since it
      // may itself open a marker (`[[emotion:happy]`).
      this.#buffer = ''
      let out = this.#visible('[')
      for (const next of candidate.slice(1)) out += this.#feed(next)
      return out
    }
    if (char === '[') {
      this.#buffer = char
      return ''
    }
    if (/\s/u.test(char)) {
      if (this.#started && !(this.#afterMarker && this.#pendingSpace)) this.#pendingSpace += char
      return ''
    }
    return this.#visible(char)
  }

  #acceptMarker(marker: string): void {
    this.#result.sawMarker = true
    this.#afterMarker = true
    for (const [, key, value] of marker.matchAll(PAIR)) {
      if (key.toLowerCase() === 'emotion') {
        const emotion = toEmotion(value)
        if (emotion) this.#result.emotion = emotion
      } else {
        const action = toAction(value)
        if (action) this.#result.action = action
      }
    }
  }
}

/** Removes the markers from a whole reply (the non-streaming path). */
export function stripMarkers(text: string): { text: string } & MarkerResult {
  const filter = new MarkerFilter()
  const visible = filter.push(text) + filter.end()
  return { text: visible, ...filter.result }
}
