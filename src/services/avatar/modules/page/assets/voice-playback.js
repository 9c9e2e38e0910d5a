// The voice reply's sentences on the page's one AudioContext: scheduled back to back, paused
// where they are (the server's `paused`: someone may be speaking over the avatar) and resumed
// from the exact sample they stopped at (`resumed`: it was a cough), or dropped (`interrupted`).
// The context itself is never suspended: it also runs the microphone.
import { pcmWavToAudioBuffer } from './wav-pcm.js'

// A sentence that arrives while nothing is playing starts this long after now, so that the
// browser's audio thread has it before it is due.
const LEAD_SECONDS = 0.02

/** Base64 to an ArrayBuffer. */
function bytesOf(text) {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index)
  return bytes.buffer
}

/** `context()` → the page's AudioContext; `onSpeaking(bool)`; `onPlayed()` after each sentence played to its end. */
export function createVoicePlayback({ context, onSpeaking, onPlayed }) {
  // The sentences not yet played to their end, in order: { buffer, visemes, offset, source, start }.
  // `offset` is where in the buffer it (re)starts; `start` is the context time of the buffer's
  // sample 0 as scheduled (so the playhead of a sentence is currentTime − start).
  let sentences = []
  let nextStart = 0
  let paused = false
  // Decoding runs in arrival order (decodeAudioData, the fallback, is asynchronous).
  let decoding = Promise.resolve()
  let generation = 0

  function schedule(sentence) {
    const audio = context()
    const when = Math.max(audio.currentTime + LEAD_SECONDS, nextStart)
    const source = audio.createBufferSource()
    source.buffer = sentence.buffer
    source.connect(audio.destination)
    source.onended = () => {
      if (sentence.source !== source) return
      sentences = sentences.filter((other) => other !== sentence)
      onPlayed()
      if (sentences.length === 0) {
        nextStart = 0
        onSpeaking(false)
      }
    }
    source.start(when, sentence.offset)
    sentence.source = source
    sentence.start = when - sentence.offset
    nextStart = when + sentence.buffer.duration - sentence.offset
    onSpeaking(true)
    return when
  }

  /** Stops every scheduled source (their sentences stay, to be resumed or dropped). */
  function silence() {
    for (const sentence of sentences) {
      if (!sentence.source) continue
      sentence.source.onended = null
      try {
        sentence.source.stop()
      } catch {}
      sentence.source = null
    }
  }

  /** Whether a scheduled sentence is sounding at context time `at`. */
  function soundingAt(at) {
    return sentences.some((sentence) => sentence.source && at >= sentence.start + sentence.offset && at < sentence.start + sentence.buffer.duration)
  }

  return {
    get paused() {
      return paused
    },
    /** Whether a sentence is scheduled or held. */
    get active() {
      return sentences.length > 0
    },

    /**
     * Decodes an `audio` frame and schedules it after the sentences before it (or holds it while
     * paused). Resolves to the context time its first sample plays, or undefined when held or dropped.
     */
    add(frame) {
      const mine = generation
      const decoded = decoding.then(async () => {
        const audio = context()
        const bytes = bytesOf(frame.audio)
        const buffer = pcmWavToAudioBuffer(audio, bytes) ?? (await audio.decodeAudioData(bytes))
        if (mine !== generation) return undefined
        const sentence = { buffer, visemes: Array.isArray(frame.visemes) ? frame.visemes : null, offset: 0, source: null, start: 0 }
        sentences.push(sentence)
        return paused ? undefined : schedule(sentence)
      })
      decoding = decoded.catch(() => {})
      return decoded
    },

    /**
     * Stops every sentence now and remembers where each one was. Answers the context time it
     * stopped at and whether a sentence was sounding then (not only scheduled for later).
     */
    pause() {
      const at = context().currentTime
      if (paused) return { at, sounding: false }
      paused = true
      const sounding = soundingAt(at)
      for (const sentence of sentences) {
        if (sentence.source) sentence.offset = Math.min(sentence.buffer.duration, Math.max(sentence.offset, at - sentence.start))
      }
      silence()
      sentences = sentences.filter((sentence) => sentence.offset < sentence.buffer.duration)
      nextStart = 0
      onSpeaking(false)
      return { at, sounding }
    },

    /** Plays what `pause` held, from where it stopped, back to back. Answers the context time it starts again. */
    resume() {
      if (!paused) return undefined
      paused = false
      let first
      for (const sentence of sentences) {
        const when = schedule(sentence)
        first ??= when
      }
      return first
    },

    /** Drops everything, playing or held (and what is still being decoded). Answers as `pause` does. */
    stop() {
      generation++
      const at = context().currentTime
      const sounding = !paused && soundingAt(at)
      silence()
      sentences = []
      nextStart = 0
      paused = false
      onSpeaking(false)
      return { at, sounding }
    },

    /** The viseme at the context's time: undefined when nothing is scheduled, `sil` while paused or between sentences. */
    viseme() {
      if (sentences.length === 0) return undefined
      if (paused) return 'sil'
      const at = context().currentTime
      const playing = sentences.find((sentence) => sentence.source && at >= sentence.start + sentence.offset && at < sentence.start + sentence.buffer.duration)
      if (!playing?.visemes) return 'sil'
      const ms = (at - playing.start) * 1000
      for (const span of playing.visemes) if (ms >= span.start_ms && ms < span.end_ms) return span.viseme
      return 'sil'
    },
  }
}
