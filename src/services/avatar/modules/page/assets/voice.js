// Voice mode of the avatar page: the microphone streams to /ws (16 kHz 16-bit PCM, 20 ms
// frames; or Opus packets where asked for and WebCodecs can, opus-encoder.js), the server
// answers with vad, transcripts, tokens and the reply's sentences as audio with their viseme
// timelines (docs/avatar-protocol.md, "Voice mode"). The sentences are
// scheduled back to back on one AudioContext, so they play without gaps, and the mouth reads the
// timeline of the one playing. Hands-free listens until turned off; push-to-talk sends audio
// only while the button (or Space on it) is held.
//
// Every turn is also measured on the AudioContext's clock (window.voiceTurns): the arrival of
// each event, and the time the first reply sample is scheduled to play; and the capture time of
// the first sample louder than −6 dBFS (window.voiceCapture.markerAt), which ties a test's
// microphone file (a beep before the speech) to that clock; and the audio bytes sent since
// window.voiceCapture.startedAt, up to lastSentAt (the encoding's cost). The browser test and
// bench/avatar-voice-browser.ts read them.

import { createOpusSender, opusWanted } from './opus-encoder.js'

const RATE = 16000
const FRAME_SAMPLES = 320 // 20 ms at 16 kHz
const MARKER = 0.5 // −6 dBFS
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

/** Averages the input samples that fall into each 16 kHz sample (a simple low-pass). */
function downsampler(inputRate) {
  const ratio = inputRate / RATE
  let position = 0 // where the next output sample starts, in input samples (may be fractional)
  let carry = new Float32Array(0)
  return (block) => {
    const input = new Float32Array(carry.length + block.length)
    input.set(carry)
    input.set(block, carry.length)
    const out = []
    while (position + ratio <= input.length) {
      const from = Math.floor(position)
      const to = Math.max(from + 1, Math.floor(position + ratio))
      let sum = 0
      for (let at = from; at < to; at++) sum += input[at]
      out.push(sum / (to - from))
      position += ratio
    }
    const keep = Math.floor(position)
    carry = input.slice(keep)
    position -= keep
    return out
  }
}

/**
 * `ui`: { context() → the page's AudioContext, sessionId() → string, onState(listening, mode),
 * onPartial(text), onFinal(text), onToken(text), onDone(reply), onInterrupted(), onSpeaking(bool),
 * onError(message) }.
 */
export function createVoiceMode(ui) {
  const voice = {
    socket: null,
    capture: null, // { stream, source, node, opus }
    encoding: 'pcm16',
    mode: 'hands-free',
    talking: false, // push-to-talk held
    sources: [], // the reply's scheduled AudioBufferSourceNodes
    timelines: [], // { start, end, visemes } on the context clock
    nextStart: 0,
    turn: null, // the measurement of the turn in progress
    played: 0,
  }
  window.voiceTurns = []
  window.voiceCapture = {}

  const now = () => ui.context().currentTime
  const send = (frame) => {
    if (voice.socket?.readyState !== WebSocket.OPEN) return
    voice.socket.send(frame)
    if (!(frame instanceof ArrayBuffer)) return
    window.voiceCapture.audioBytes = (window.voiceCapture.audioBytes ?? 0) + frame.byteLength
    window.voiceCapture.lastSentAt = now()
  }

  function stopPlayback() {
    for (const source of voice.sources) {
      source.onended = null
      try {
        source.stop()
      } catch {}
    }
    voice.sources = []
    voice.timelines = []
    voice.nextStart = 0
    ui.onSpeaking(false)
  }

  async function play(frame, turn) {
    const context = ui.context()
    const buffer = await context.decodeAudioData(bytesOf(frame.audio))
    const source = context.createBufferSource()
    source.buffer = buffer
    source.connect(context.destination)
    const start = Math.max(context.currentTime + LEAD_SECONDS, voice.nextStart)
    voice.nextStart = start + buffer.duration
    source.start(start)
    voice.sources.push(source)
    if (Array.isArray(frame.visemes)) voice.timelines.push({ start, end: start + buffer.duration, visemes: frame.visemes })
    if (turn && turn.playStart === undefined) turn.playStart = start
    ui.onSpeaking(true)
    source.onended = () => {
      voice.sources = voice.sources.filter((playing) => playing !== source)
      voice.played++
      document.body.dataset.voiceAudioPlayed = String(voice.played)
      if (voice.sources.length === 0) {
        voice.timelines = []
        ui.onSpeaking(false)
      }
    }
  }

  function onMessage(event) {
    const frame = JSON.parse(event.data)
    const at = now()
    if (frame.type === 'voice.started') {
      window.voiceCapture.encoding = frame.encoding
    } else if (frame.type === 'vad' && frame.speaking) {
      voice.turn = { speechStart: at }
    } else if (frame.type === 'vad' && !frame.speaking && voice.turn) {
      voice.turn.endOfTurn = at
    } else if (frame.type === 'transcript') {
      if (frame.final) {
        if (voice.turn) voice.turn.transcript = at
        if (voice.turn) voice.turn.text = frame.text
        ui.onFinal(frame.text)
      } else ui.onPartial(frame.text)
    } else if (frame.type === 'token') {
      if (voice.turn && voice.turn.firstToken === undefined) voice.turn.firstToken = at
      ui.onToken(frame.content)
    } else if (frame.type === 'audio') {
      if (voice.turn && voice.turn.audioArrived === undefined) voice.turn.audioArrived = at
      play(frame, voice.turn).catch((error) => ui.onError(`Speech failed: ${error.message}`))
    } else if (frame.type === 'done') {
      if (voice.turn) window.voiceTurns.push(voice.turn)
      voice.turn = null
      ui.onDone(frame)
    } else if (frame.type === 'interrupted') {
      // Barge-in: the server stopped the reply; so does the page, at once.
      stopPlayback()
      if (voice.turn) voice.turn.interrupted = at
      ui.onInterrupted(frame)
    } else if (frame.type === 'error') {
      ui.onError(frame.message)
    }
  }

  function connect() {
    return new Promise((resolve, reject) => {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
      const socket = new WebSocket(`${scheme}://${location.host}/ws?session_id=${encodeURIComponent(ui.sessionId())}`)
      socket.onopen = () => resolve(socket)
      socket.onerror = () => reject(new Error('the voice connection failed'))
      socket.onmessage = onMessage
      socket.onclose = () => {
        if (voice.socket === socket) off()
      }
    })
  }

  function startVoice() {
    const format = voice.encoding === 'opus' ? { encoding: 'opus', sampleRate: ui.context().sampleRate } : { sampleRate: RATE }
    send(JSON.stringify({ type: 'voice.start', ...format, endOfTurnMs: Number(document.body.dataset.endOfTurnMs || 500), language: ui.language() || undefined }))
  }

  async function on(mode) {
    voice.mode = mode
    const context = ui.context()
    // The worklet and the socket first: audio captured before the source is connected is lost.
    await context.audioWorklet.addModule('/avatar/assets/recorder-worklet.js')
    voice.encoding = (await opusWanted(context.sampleRate)) ? 'opus' : 'pcm16'
    voice.socket = await connect()
    if (mode === 'hands-free') startVoice()
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } })
    const source = context.createMediaStreamSource(stream)
    const node = new AudioWorkletNode(context, 'recorder')
    const down = downsampler(context.sampleRate)
    const opus = voice.encoding === 'opus' ? createOpusSender(context.sampleRate, send, ui.onError) : null
    let pending = []
    node.port.onmessage = (event) => {
      const { samples: block, time } = event.data
      if (window.voiceCapture.markerAt === undefined) {
        const loud = block.findIndex((sample) => Math.abs(sample) > MARKER)
        if (loud >= 0) window.voiceCapture.markerAt = time + loud / context.sampleRate
      }
      if (voice.mode === 'push-to-talk' && !voice.talking) return
      if (opus) return opus.push(block, time)
      pending = pending.concat(down(block))
      while (pending.length >= FRAME_SAMPLES) {
        const pcm = new Int16Array(FRAME_SAMPLES)
        for (let index = 0; index < FRAME_SAMPLES; index++) pcm[index] = Math.round(Math.max(-1, Math.min(1, pending[index])) * 32767)
        pending = pending.slice(FRAME_SAMPLES)
        send(pcm.buffer)
      }
    }
    source.connect(node)
    window.voiceCapture.startedAt = context.currentTime
    voice.capture = { stream, source, node, opus }
    ui.onState(true, mode)
  }

  function off() {
    const capture = voice.capture
    voice.capture = null
    if (capture) {
      capture.source.disconnect()
      capture.node.disconnect()
      for (const track of capture.stream.getTracks()) track.stop()
      capture.opus?.close()
    }
    const socket = voice.socket
    voice.socket = null
    socket?.close()
    voice.talking = false
    stopPlayback()
    ui.onState(false, voice.mode)
  }

  return {
    get active() {
      return voice.capture !== null
    },
    on,
    off,
    /** Push-to-talk pressed: speech over the avatar stops it. */
    press() {
      if (voice.mode !== 'push-to-talk' || voice.talking || !voice.capture) return
      voice.talking = true
      stopPlayback()
      startVoice()
      ui.onState(true, voice.mode, true)
    },
    /** Push-to-talk released: what was said is the turn. */
    release() {
      if (!voice.talking) return
      voice.talking = false
      // The last packet the encoder holds belongs to the turn: voice.stop goes after it.
      const flushed = voice.capture?.opus?.flush() ?? Promise.resolve()
      flushed.then(() => send(JSON.stringify({ type: 'voice.stop' })))
      ui.onState(true, voice.mode, false)
    },
    /** The viseme playing now, or undefined when no reply is playing. */
    viseme() {
      if (voice.sources.length === 0) return undefined
      const at = now()
      const playing = voice.timelines.find((timeline) => at >= timeline.start && at < timeline.end)
      if (!playing) return 'sil'
      const ms = (at - playing.start) * 1000
      for (const span of playing.visemes) if (ms >= span.start_ms && ms < span.end_ms) return span.viseme
      return 'sil'
    },
  }
}
