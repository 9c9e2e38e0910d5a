// Voice mode of the avatar page: the microphone streams to /ws (16 kHz 16-bit PCM, 20 ms
// frames; or Opus packets where asked for and WebCodecs can, opus-encoder.js), the server
// answers with vad, transcripts, tokens and the reply's sentences as audio with their viseme
// timelines (docs/avatar-protocol.md, "Voice mode"); voice-playback.js plays them. Hands-free
// listens until turned off; push-to-talk sends audio only while the button (or Space on it) is
// held.
//
// Every turn is also measured on the AudioContext's clock (window.voiceTurns): the arrival of
// each event, the time the first reply sample is scheduled to play, and when playback was paused,
// resumed or stopped; and the capture time of the first sample louder than −6 dBFS
// (window.voiceCapture.markerAt), which ties a test's microphone file (a beep before the speech)
// to that clock; and the audio bytes sent since window.voiceCapture.startedAt, up to lastSentAt
// (the encoding's cost). The browser tests and bench/avatar-voice-browser.ts read them.
import { createOpusSender, opusWanted } from './opus-encoder.js'
import { createVoicePlayback } from './voice-playback.js'

const RATE = 16000
const FRAME_SAMPLES = 320 // 20 ms at 16 kHz
const MARKER = 0.5 // −6 dBFS

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
    hearing: null, // the measurement of the turn being spoken
    answering: null, // the measurement of the turn whose reply is arriving
    playingTurn: null, // the measurement of the turn whose reply is playing (a reply plays on after `done`)
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
  const playback = createVoicePlayback({
    context: ui.context,
    onSpeaking: (speaking) => ui.onSpeaking(speaking),
    onPlayed() {
      voice.played++
      document.body.dataset.voiceAudioPlayed = String(voice.played)
    },
  })

  /** Drops the reply's audio; `turn` (if any) records when playback stopped. */
  function stopPlayback(turn) {
    const stop = playback.stop()
    if (turn && stop.sounding && turn.stopped === undefined) turn.stopped = stop.at
  }

  function play(frame, turn) {
    voice.playingTurn = turn
    playback
      .add(frame)
      .then((start) => {
        if (turn && start !== undefined && turn.playStart === undefined) turn.playStart = start
      })
      .catch((error) => ui.onError(`Speech failed: ${error.message}`))
  }

  /** The turn a frame of the reply belongs to (one is made up if the page missed its start). */
  function answering(at) {
    voice.answering ??= { speechStart: at }
    return voice.answering
  }

  function onMessage(event) {
    const frame = JSON.parse(event.data)
    const at = now()
    if (frame.type === 'voice.started') {
      window.voiceCapture.encoding = frame.encoding
    } else if (frame.type === 'vad' && frame.speaking) {
      voice.hearing = { speechStart: at }
      // Speech over a reply the server believes played out (it reckons the page's playback from
      // what it sent, which a busy page can lag behind): the page stops it itself.
      if (!voice.answering && playback.active) stopPlayback(voice.playingTurn)
    } else if (frame.type === 'vad' && !frame.speaking && voice.hearing) {
      voice.hearing.endOfTurn = at
    } else if (frame.type === 'transcript') {
      if (frame.final) {
        const turn = voice.hearing ?? { speechStart: at }
        voice.hearing = null
        turn.transcript = at
        turn.text = frame.text
        if (frame.text) voice.answering = turn
        // A pause the server never ended belongs to a reply that is over.
        if (frame.text && playback.paused) playback.stop()
        ui.onFinal(frame.text)
      } else ui.onPartial(frame.text)
    } else if (frame.type === 'token') {
      const turn = answering(at)
      if (turn.firstToken === undefined) turn.firstToken = at
      ui.onToken(frame.content)
    } else if (frame.type === 'audio') {
      const turn = answering(at)
      if (turn.audioArrived === undefined) turn.audioArrived = at
      play(frame, turn)
    } else if (frame.type === 'done') {
      if (voice.answering) window.voiceTurns.push(voice.answering)
      voice.answering = null
      ui.onDone(frame)
    } else if (frame.type === 'paused') {
      // Someone may be speaking over the reply: silent at once, kept where it is.
      const turn = voice.answering ?? voice.playingTurn
      const stop = playback.pause()
      if (turn) {
        turn.pauses ??= []
        turn.pauses.push({ at, atMs: frame.atMs, stopped: stop.at, sounding: stop.sounding })
        if (stop.sounding && turn.stopped === undefined) turn.stopped = stop.at
      }
      document.body.dataset.voicePaused = String(Number(document.body.dataset.voicePaused || 0) + 1)
    } else if (frame.type === 'resumed') {
      // It was not speech (a cough): the reply goes on from where it stopped.
      const turn = voice.answering ?? voice.playingTurn
      const again = playback.resume()
      const pause = turn?.pauses?.at(-1)
      if (pause) {
        pause.resumed = at
        pause.playsAgain = again
      }
      if (turn) delete turn.stopped
      document.body.dataset.voiceResumed = String(Number(document.body.dataset.voiceResumed || 0) + 1)
    } else if (frame.type === 'interrupted') {
      // Barge-in: the server stopped the reply; so does the page, at once.
      const turn = voice.answering ?? voice.playingTurn
      stopPlayback(turn)
      if (turn) {
        turn.interrupted = at
        if (voice.answering === turn) window.voiceTurns.push(turn)
      }
      voice.answering = null
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
    // Tests and benchmarks set the detector's timings on the page (data-end-of-turn-ms, data-min-speech-ms).
    const { endOfTurnMs, minSpeechMs } = document.body.dataset
    send(JSON.stringify({ type: 'voice.start', ...format, endOfTurnMs: Number(endOfTurnMs || 500), minSpeechMs: minSpeechMs ? Number(minSpeechMs) : undefined, language: ui.language() || undefined }))
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
    stopPlayback(voice.playingTurn)
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
      stopPlayback(voice.playingTurn)
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
    /** The viseme playing now, or undefined when no reply is playing or held. */
    viseme: () => playback.viseme(),
  }
}
