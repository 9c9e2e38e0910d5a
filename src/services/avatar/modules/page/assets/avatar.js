// The avatar page: plain browser JavaScript, no framework, no external assets. It talks to
// the avatar API over HTTP: /v1/chat/stream (SSE over fetch), /v1/tts (with its viseme
// timeline), /v1/asr, the session endpoints and the operator channel (/v1/session/{id}/events);
// voice mode (voice.js) talks over the WebSocket /ws.
import { createVoiceMode } from './voice.js'

const $ = (selector) => document.querySelector(selector)
const avatar = $('#avatar')
const mouth = $('#mouth')
const messages = $('#messages')
const input = $('#input')
const stopButton = $('#stop')
const micButton = $('#mic')
const statusLine = $('#status')

const EMOTIONS = ['neutral', 'happy', 'surprised', 'sad', 'angry']
const ACTIONS = ['idle', 'wave', 'greet', 'think', 'nod', 'shakeHead', 'dance', 'speak']
const SESSION_KEY = 'triad.avatar.session'
const SENTENCE_END = /[.!?。！？；;\n]/

const state = {
  sessionId: localStorage.getItem(SESSION_KEY) || newSessionId(),
  chat: null, // AbortController of the reply being streamed
  gestureTimer: 0,
  emotion: 'neutral',
  action: 'idle',
}
localStorage.setItem(SESSION_KEY, state.sessionId)

function newSessionId() {
  return `web-${crypto.randomUUID()}`
}

function setStatus(text) {
  statusLine.textContent = text
}

async function readDetail(response) {
  try {
    const body = await response.json()
    if (body && typeof body.detail === 'string') return body.detail
  } catch {}
  return `HTTP ${response.status}`
}

// ---------------------------------------------------------------- the character

/** The mouth as a closed path: `curve` −1 (frown) … 1 (smile), `open` 0 … 1, `width` around 1. */
function mouthPath(curve, open, width = 1) {
  const y = 206
  const half = (22 - open * 4) * width
  const corner = y - curve * 6
  const upper = y + curve * 3 - open * 5
  const lower = y + curve * 9 + 3 + open * 26
  return `M${150 - half} ${corner} Q150 ${upper} ${150 + half} ${corner} Q150 ${lower} ${150 - half} ${corner} Z`
}

const MOUTH_SHAPES = {
  neutral: { curve: 0.1, open: 0 },
  happy: { curve: 1, open: 0.15 },
  surprised: { curve: 0, open: 0.55 },
  sad: { curve: -0.9, open: 0 },
  angry: { curve: -0.6, open: 0.05 },
}

/** How open and how wide each viseme of the speech timeline (the Oculus set) shows the mouth. */
const VISEME_SHAPES = {
  sil: { open: 0, width: 1 },
  PP: { open: 0, width: 0.92 },
  FF: { open: 0.12, width: 1 },
  TH: { open: 0.2, width: 1 },
  DD: { open: 0.3, width: 1 },
  kk: { open: 0.35, width: 1 },
  CH: { open: 0.3, width: 0.75 },
  SS: { open: 0.15, width: 1.1 },
  nn: { open: 0.25, width: 1 },
  RR: { open: 0.3, width: 0.8 },
  aa: { open: 0.9, width: 1 },
  E: { open: 0.55, width: 1.1 },
  ih: { open: 0.35, width: 1.15 },
  oh: { open: 0.65, width: 0.75 },
  ou: { open: 0.35, width: 0.6 },
}

/**
 * The page's clock for lip-sync, in milliseconds. A test may set `window.avatarClock` before
 * the page loads to move time itself, and so check the mouth at exact instants.
 */
const now = () => (typeof window.avatarClock === 'function' ? window.avatarClock() : performance.now())

function setEmotion(emotion) {
  state.emotion = EMOTIONS.includes(emotion) ? emotion : 'neutral'
  avatar.dataset.emotion = state.emotion
  $('#emotion-label').textContent = state.emotion
}

/** Plays a gesture; `hold` keeps it, otherwise it returns to idle (or speak) after a while. */
function setAction(action, hold = false) {
  state.action = ACTIONS.includes(action) ? action : 'idle'
  avatar.dataset.action = state.action
  $('#action-label').textContent = state.action
  clearTimeout(state.gestureTimer)
  if (!hold && state.action !== 'idle') {
    state.gestureTimer = setTimeout(() => setAction(speech.playing ? 'speak' : 'idle', true), 6000)
  }
}

// ---------------------------------------------------------------- speech out

const speech = {
  context: null,
  analyser: null,
  samples: null,
  queue: [], // {audio: Promise<{bytes: ArrayBuffer, visemes: Array|null}>}
  playing: null, // AudioBufferSourceNode
  visemes: null, // the timeline of what is playing, when the server gave one
  startedAt: 0, // now() when it started
  controller: new AbortController(),
  level: 0,
  played: 0,
}

function audioContext() {
  if (!speech.context) {
    speech.context = new AudioContext()
    speech.analyser = speech.context.createAnalyser()
    speech.analyser.fftSize = 1024
    speech.samples = new Float32Array(speech.analyser.fftSize)
    speech.analyser.connect(speech.context.destination)
  }
  if (speech.context.state === 'suspended') speech.context.resume()
  return speech.context
}

/** Base64 to bytes. */
function decodeBase64(text) {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index)
  return bytes.buffer
}

/**
 * Starts fetching the audio of `text` now, to play after what is already queued, with its
 * viseme timeline (the mouth follows it; without one, the loudness moves the mouth).
 */
function speak(text, voice) {
  const clean = text.trim()
  if (!clean || $('#mute').checked) return
  const body = { text: clean, rate: $('#rate').value, format: 'mp3', visemes: true }
  if (voice || $('#voice').value) body.voice = voice || $('#voice').value
  const audio = fetch('/v1/tts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: speech.controller.signal,
  }).then(async (response) => {
    if (!response.ok) throw new Error(await readDetail(response))
    const spoken = await response.json()
    return { bytes: decodeBase64(spoken.audio), visemes: Array.isArray(spoken.visemes) ? spoken.visemes : null }
  })
  // A failed sentence is skipped when its turn comes; keep the rejection from going unheard.
  audio.catch(() => {})
  speech.queue.push({ audio })
  playNext()
}

async function playNext() {
  if (speech.playing || speech.queue.length === 0) return
  const item = speech.queue.shift()
  const context = audioContext()
  const marker = {}
  speech.playing = marker
  try {
    const spoken = await item.audio
    const buffer = await context.decodeAudioData(spoken.bytes)
    if (speech.playing !== marker) return // stopped meanwhile
    const source = context.createBufferSource()
    source.buffer = buffer
    source.connect(speech.analyser)
    source.onended = () => {
      if (speech.playing !== source) return
      speech.playing = null
      speech.played++
      document.body.dataset.audioPlayed = String(speech.played)
      if (speech.queue.length === 0) finishSpeaking()
      playNext()
    }
    speech.playing = source
    speech.visemes = spoken.visemes
    avatar.dataset.speaking = 'true'
    if (state.action === 'idle') setAction('speak', true)
    source.start()
    speech.startedAt = now()
    updateStopButton()
  } catch (error) {
    if (speech.playing === marker) speech.playing = null
    if (error.name !== 'AbortError') setStatus(`Speech failed: ${error.message}`)
    if (speech.queue.length === 0) finishSpeaking()
    playNext()
  }
}

function finishSpeaking() {
  speech.visemes = null
  avatar.dataset.speaking = 'false'
  if (state.action === 'speak') setAction('idle', true)
  updateStopButton()
}

function stopSpeaking() {
  speech.controller.abort()
  speech.controller = new AbortController()
  speech.queue = []
  const current = speech.playing
  speech.playing = null
  if (current && typeof current.stop === 'function') {
    current.onended = null
    current.stop()
  }
  finishSpeaking()
}

/** The viseme of the timeline at `ms` from the start of the audio (sil past its end). */
function visemeAt(timeline, ms) {
  for (const span of timeline) if (ms >= span.start_ms && ms < span.end_ms) return span.viseme
  return 'sil'
}

/**
 * Moves the mouth on every frame: to the viseme of the timeline at the playing audio's
 * position, or with the loudness of what is playing when there is no timeline.
 */
function animateMouth() {
  const shape = MOUTH_SHAPES[state.emotion] || MOUTH_SHAPES.neutral
  let target = 0
  let width = 1
  const voiceViseme = voiceMode.viseme()
  if (voiceViseme !== undefined) {
    mouth.dataset.viseme = voiceViseme
    target = VISEME_SHAPES[voiceViseme].open
    width = VISEME_SHAPES[voiceViseme].width
  } else if (speech.playing && speech.visemes) {
    const viseme = visemeAt(speech.visemes, now() - speech.startedAt)
    mouth.dataset.viseme = viseme
    target = VISEME_SHAPES[viseme].open
    width = VISEME_SHAPES[viseme].width
  } else if (speech.playing && speech.analyser) {
    delete mouth.dataset.viseme
    speech.analyser.getFloatTimeDomainData(speech.samples)
    let sum = 0
    for (const sample of speech.samples) sum += sample * sample
    target = Math.min(1, Math.sqrt(sum / speech.samples.length) * 5)
  } else {
    mouth.dataset.viseme = 'sil'
  }
  // Open fast, close a little slower, like a jaw.
  speech.level += (target - speech.level) * (target > speech.level ? 0.6 : 0.25)
  if (speech.level > Number(document.body.dataset.peakMouth || 0)) document.body.dataset.peakMouth = speech.level.toFixed(3)
  const open = Math.min(1, shape.open + speech.level)
  mouth.setAttribute('d', mouthPath(shape.curve * (1 - speech.level * 0.6), open, width))
  mouth.dataset.open = open.toFixed(2)
  requestAnimationFrame(animateMouth)
}

// ---------------------------------------------------------------- chat

function addMessage(role, text, extra = {}) {
  const item = document.createElement('li')
  item.className = role
  const content = document.createElement('span')
  content.className = 'content'
  content.textContent = text
  item.append(content)
  if (extra.emotion || extra.action) tagMessage(item, extra.emotion, extra.action)
  messages.append(item)
  messages.scrollTop = messages.scrollHeight
  return item
}

function tagMessage(item, emotion, action) {
  const tag = document.createElement('span')
  tag.className = 'tag'
  tag.textContent = `${emotion || 'neutral'} · ${action || 'idle'}`
  item.append(tag)
}

function updateStopButton() {
  stopButton.disabled = !(state.chat || speech.playing || speech.queue.length > 0)
}

/** Reads `data:` events from an SSE response body. */
async function* sseEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  while (true) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value.replace(/\r\n?/g, '\n')
    let end = buffer.indexOf('\n\n')
    while (end !== -1) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n')
      if (data) yield JSON.parse(data)
      end = buffer.indexOf('\n\n')
    }
  }
}

async function send(text) {
  const userText = text.trim()
  if (!userText) return
  stop() // a new message interrupts whatever the avatar was doing
  audioContext() // created inside the user's gesture, so audio may play
  addMessage('user', userText)
  input.value = ''
  const reply = addMessage('assistant', '')
  reply.classList.add('streaming')
  const content = reply.querySelector('.content')
  const controller = new AbortController()
  state.chat = controller
  updateStopButton()
  setAction('think', true)
  setStatus('Thinking…')
  let spoken = 0
  let received = ''
  try {
    const response = await fetch('/v1/chat/stream', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ sessionId: state.sessionId, userText }),
      signal: controller.signal,
    })
    if (!response.ok) throw new Error(await readDetail(response))
    for await (const event of sseEvents(response)) {
      if (event.type === 'token') {
        if (received === '') setStatus('Replying…')
        received += event.content
        content.textContent = received
        messages.scrollTop = messages.scrollHeight
        // Speak each sentence as soon as it is complete.
        const tail = received.slice(spoken)
        const match = tail.match(SENTENCE_END)
        if (match && match.index !== undefined) {
          const cut = spoken + match.index + 1
          speak(received.slice(spoken, cut))
          spoken = cut
        }
      } else if (event.type === 'done') {
        content.textContent = event.replyText
        if (event.replyText.startsWith(received)) speak(event.replyText.slice(spoken))
        else if (spoken === 0) speak(event.replyText)
        setEmotion(event.emotion)
        setAction(event.action)
        tagMessage(reply, event.emotion, event.action)
        setStatus('Ready')
      } else if (event.type === 'error') {
        addMessage('error', event.message)
        setStatus('The reply failed')
      }
    }
  } catch (error) {
    if (error.name === 'AbortError') {
      reply.classList.add('interrupted')
      tagMessage(reply, state.emotion, 'stopped')
      setStatus('Stopped')
    } else {
      addMessage('error', error.message)
      setStatus('The reply failed')
      setAction('idle', true)
    }
  } finally {
    reply.classList.remove('streaming')
    if (state.chat === controller) state.chat = null
    if (state.action === 'think') setAction(speech.playing ? 'speak' : 'idle', true)
    updateStopButton()
    loadSessions()
  }
}

/** Barge-in: stop the reply stream and the voice at once. */
function stop() {
  if (state.chat) {
    state.chat.abort()
    state.chat = null
  }
  stopSpeaking()
  updateStopButton()
}

// ---------------------------------------------------------------- sessions

async function loadSessions() {
  const list = $('#session-list')
  try {
    const response = await fetch('/v1/sessions')
    if (!response.ok) throw new Error(await readDetail(response))
    const { sessions } = await response.json()
    renderSessions(list, sessions)
    return sessions
  } catch (error) {
    setStatus(`Could not list conversations: ${error.message}`)
    return []
  }
}

function renderSessions(list, sessions) {
  list.replaceChildren()
  if (sessions.length === 0) {
    const empty = document.createElement('li')
    empty.className = 'empty'
    empty.textContent = 'No conversations yet'
    list.append(empty)
  }
  for (const session of sessions) {
    const item = document.createElement('li')
    item.dataset.sessionId = session.id
    if (session.id === state.sessionId) item.classList.add('current')
    const open = document.createElement('button')
    open.type = 'button'
    open.className = 'open'
    open.title = `Resume ${session.id}`
    const name = document.createElement('span')
    name.textContent = session.id
    const meta = document.createElement('span')
    meta.className = 'meta'
    meta.textContent = `${new Date(session.created_at).toLocaleString()} · ${session.message_count} messages`
    open.append(name, meta)
    open.addEventListener('click', () => resume(session.id))
    const remove = document.createElement('button')
    remove.type = 'button'
    remove.className = 'delete'
    remove.title = 'Delete this conversation'
    remove.setAttribute('aria-label', `Delete ${session.id}`)
    remove.textContent = '✕'
    remove.addEventListener('click', () => removeSession(session.id))
    item.append(open, remove)
    list.append(item)
  }
}

async function resume(sessionId) {
  stop()
  state.sessionId = sessionId
  localStorage.setItem(SESSION_KEY, sessionId)
  listenToOperator()
  messages.replaceChildren()
  const response = await fetch(`/v1/session/${encodeURIComponent(sessionId)}/history`)
  if (!response.ok) {
    setStatus(`Could not load the conversation: ${await readDetail(response)}`)
    return
  }
  const history = await response.json()
  for (const message of history.messages) addMessage(message.role, message.content, message)
  const last = history.messages.filter((message) => message.role !== 'user').at(-1)
  setEmotion(last?.emotion || 'neutral')
  setAction('idle', true)
  loadSessions()
}

async function removeSession(sessionId) {
  const response = await fetch(`/v1/session/${encodeURIComponent(sessionId)}`, { method: 'DELETE' })
  if (!response.ok) setStatus(`Could not delete: ${await readDetail(response)}`)
  else setStatus('Conversation deleted')
  if (sessionId === state.sessionId) startNewSession()
  loadSessions()
}

function startNewSession() {
  stop()
  state.sessionId = newSessionId()
  localStorage.setItem(SESSION_KEY, state.sessionId)
  listenToOperator()
  messages.replaceChildren()
  setEmotion('neutral')
  setAction('idle', true)
  loadSessions()
}

// ---------------------------------------------------------------- the operator channel

const operator = { source: null, sessionId: null }

/**
 * Listens to what an operator sends to the session shown (GET /v1/session/{id}/events): `say`
 * interrupts whatever the avatar was doing and speaks the text with its emotion and action;
 * `act` shows an emotion or plays an action. EventSource reconnects by itself.
 */
function listenToOperator() {
  if (operator.source && operator.sessionId === state.sessionId) return
  operator.source?.close()
  operator.sessionId = state.sessionId
  document.body.dataset.operatorListening = 'false'
  const source = new EventSource(`/v1/session/${encodeURIComponent(state.sessionId)}/events`)
  operator.source = source
  source.onopen = () => {
    document.body.dataset.operatorListening = 'true'
  }
  source.onmessage = (message) => {
    let event
    try {
      event = JSON.parse(message.data)
    } catch {
      return
    }
    if (event.type === 'say') {
      stop()
      audioContext()
      addMessage('operator', event.text, event)
      setEmotion(event.emotion)
      setAction(event.action)
      speak(event.text, event.voice)
      updateStopButton()
    } else if (event.type === 'act') {
      if (event.emotion) setEmotion(event.emotion)
      if (event.action) setAction(event.action)
    }
  }
}

// ---------------------------------------------------------------- speech in

const recorder = { active: null }

/** 16-bit mono WAV at 16 kHz: what every recognizer takes, the local one included. */
function encodeWav(chunks, inputRate) {
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const joined = new Float32Array(length)
  let offset = 0
  for (const chunk of chunks) {
    joined.set(chunk, offset)
    offset += chunk.length
  }
  const rate = 16000
  const ratio = inputRate / rate
  const frames = Math.floor(length / ratio)
  const view = new DataView(new ArrayBuffer(44 + frames * 2))
  const text = (at, value) => {
    for (let index = 0; index < value.length; index++) view.setUint8(at + index, value.charCodeAt(index))
  }
  text(0, 'RIFF')
  view.setUint32(4, 36 + frames * 2, true)
  text(8, 'WAVEfmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, 1, true)
  view.setUint32(24, rate, true)
  view.setUint32(28, rate * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  text(36, 'data')
  view.setUint32(40, frames * 2, true)
  for (let index = 0; index < frames; index++) {
    // Average the input samples that fall into this output sample (a simple low-pass).
    const from = Math.floor(index * ratio)
    const to = Math.max(from + 1, Math.floor((index + 1) * ratio))
    let sum = 0
    for (let at = from; at < to; at++) sum += joined[at] || 0
    const sample = Math.max(-1, Math.min(1, sum / (to - from)))
    view.setInt16(44 + index * 2, Math.round(sample * 32767), true)
  }
  return new Blob([view.buffer], { type: 'audio/wav' })
}

async function startRecording() {
  stop() // talking over the avatar interrupts it
  const context = audioContext()
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } })
  await context.audioWorklet.addModule('/avatar/assets/recorder-worklet.js')
  const source = context.createMediaStreamSource(stream)
  const node = new AudioWorkletNode(context, 'recorder')
  const chunks = []
  node.port.onmessage = (event) => chunks.push(event.data.samples)
  source.connect(node)
  recorder.active = { stream, source, node, chunks, rate: context.sampleRate }
  micButton.classList.add('recording')
  micButton.setAttribute('aria-label', 'Stop recording and send')
  setStatus('Listening… click the microphone again to send')
}

async function stopRecording() {
  const active = recorder.active
  recorder.active = null
  micButton.classList.remove('recording')
  micButton.setAttribute('aria-label', 'Speak')
  active.source.disconnect()
  active.node.disconnect()
  for (const track of active.stream.getTracks()) track.stop()
  const form = new FormData()
  form.append('file', encodeWav(active.chunks, active.rate), 'speech.wav')
  if ($('#asr-language').value) form.append('language', $('#asr-language').value)
  setStatus('Recognising…')
  const response = await fetch('/v1/asr', { method: 'POST', body: form })
  if (!response.ok) {
    setStatus(`Recognition failed: ${await readDetail(response)}`)
    return
  }
  const result = await response.json()
  document.body.dataset.lastTranscript = result.text
  if (!result.text.trim()) {
    setStatus('Nothing was recognised; try again')
    return
  }
  setStatus('Ready')
  send(result.text)
}

micButton.addEventListener('click', () => {
  const action = recorder.active ? stopRecording() : startRecording()
  action.catch((error) => {
    recorder.active = null
    micButton.classList.remove('recording')
    setStatus(`Microphone: ${error.message}`)
  })
})

// ---------------------------------------------------------------- voice mode

const talkButton = $('#talk')
const holdButton = $('#hold')
const listening = $('#listening')
const heard = $('#heard')
// `item`: the reply arriving; `said`: the last one done, which may still be playing (and be interrupted).
const voiceReply = { item: null, text: '', said: null }

const voiceMode = createVoiceMode({
  context: audioContext,
  sessionId: () => state.sessionId,
  language: () => $('#asr-language').value,
  onState(on, mode, talking) {
    talkButton.setAttribute('aria-pressed', String(on))
    talkButton.textContent = on ? 'Stop voice' : 'Talk'
    holdButton.hidden = !(on && mode === 'push-to-talk')
    holdButton.setAttribute('aria-pressed', String(Boolean(talking)))
    const hearing = on && (mode === 'hands-free' || talking)
    listening.dataset.state = hearing ? 'listening' : on ? 'ready' : 'off'
    listening.textContent = hearing ? 'Listening…' : on ? 'Hold “Hold to talk” (or Space on it) while you speak' : 'Voice off'
    $('#talk-mode').disabled = on
  },
  onPartial(text) {
    heard.textContent = text
  },
  onFinal(text) {
    heard.textContent = ''
    document.body.dataset.lastTranscript = text
    if (!text) return
    addMessage('user', text)
    voiceReply.said = null
    voiceReply.item = addMessage('assistant', '')
    voiceReply.item.classList.add('streaming')
    voiceReply.text = ''
    setAction('think', true)
  },
  onToken(content) {
    if (!voiceReply.item) return
    voiceReply.text += content
    voiceReply.item.querySelector('.content').textContent = voiceReply.text
    messages.scrollTop = messages.scrollHeight
  },
  onDone(reply) {
    const item = voiceReply.item
    voiceReply.item = null
    voiceReply.said = item
    if (!item) return
    item.classList.remove('streaming')
    item.querySelector('.content').textContent = reply.replyText
    setEmotion(reply.emotion)
    setAction(reply.action)
    tagMessage(item, reply.emotion, reply.action)
  },
  onInterrupted(frame) {
    // The reply arriving, or the one done and still playing: it shows what the avatar got to say.
    const item = voiceReply.item ?? voiceReply.said
    voiceReply.item = null
    voiceReply.said = null
    if (item) {
      item.classList.remove('streaming')
      item.classList.add('interrupted')
      item.querySelector('.content').textContent = frame.replyText
      item.querySelector('.tag')?.remove()
      tagMessage(item, state.emotion, 'stopped')
    }
    document.body.dataset.voiceInterrupted = String(Number(document.body.dataset.voiceInterrupted || 0) + 1)
  },
  onSpeaking(speaking) {
    avatar.dataset.speaking = String(speaking)
    if (speaking && (state.action === 'idle' || state.action === 'think')) setAction('speak', true)
    if (!speaking && state.action === 'speak') setAction('idle', true)
  },
  onError(message) {
    setStatus(`Voice: ${message}`)
  },
})

talkButton.addEventListener('click', () => {
  if (voiceMode.active) {
    voiceMode.off()
    return
  }
  stop() // talking interrupts a typed reply still playing
  voiceMode.on($('#talk-mode').value).catch((error) => {
    voiceMode.off()
    setStatus(`Microphone: ${error.message}`)
  })
})
// Push-to-talk: hold the button, or Space (or Enter) while it has the focus.
holdButton.addEventListener('pointerdown', () => voiceMode.press())
holdButton.addEventListener('pointerup', () => voiceMode.release())
holdButton.addEventListener('pointerleave', () => voiceMode.release())
holdButton.addEventListener('keydown', (event) => {
  if (event.key !== ' ' && event.key !== 'Enter') return
  event.preventDefault()
  if (!event.repeat) voiceMode.press()
})
holdButton.addEventListener('keyup', (event) => {
  if (event.key !== ' ' && event.key !== 'Enter') return
  event.preventDefault()
  voiceMode.release()
})

// ---------------------------------------------------------------- start

async function loadCapabilities() {
  try {
    const [voicesResponse, asrResponse] = await Promise.all([fetch('/v1/tts/voices'), fetch('/v1/asr/status')])
    const voices = await voicesResponse.json()
    const select = $('#voice')
    for (const voice of voices.voices) {
      const option = document.createElement('option')
      option.value = voice.id
      option.textContent = `${voice.name} (${voice.locale}, ${voice.gender})`
      select.append(option)
    }
    const asr = await asrResponse.json()
    const usable = asr.available && typeof navigator.mediaDevices?.getUserMedia === 'function'
    micButton.disabled = !usable
    talkButton.disabled = !usable
    talkButton.title = asr.available ? (usable ? 'Talk with the avatar (voice mode)' : 'This browser cannot record audio here (it needs HTTPS or localhost)') : asr.message
    const tip = asr.available ? (usable ? `Speak (${asr.provider})` : 'This browser cannot record audio here (it needs HTTPS or localhost)') : asr.message
    micButton.title = tip
    // A disabled button shows no tooltip in some browsers; its wrapper does.
    $('#mic-wrap').title = tip
    setStatus(`Ready · voice: ${voices.provider}${voices.message ? ` (${voices.message})` : ''} · recognition: ${asr.available ? asr.provider : 'off'}`)
  } catch (error) {
    setStatus(`Could not reach the avatar service: ${error.message}`)
  }
}

$('#composer').addEventListener('submit', (event) => {
  event.preventDefault()
  send(input.value)
})
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault()
    send(input.value)
  }
})
stopButton.addEventListener('click', () => {
  stop()
  setAction('idle', true)
  setStatus('Stopped')
})
$('#new-session').addEventListener('click', startNewSession)

setEmotion('neutral')
setAction('idle', true)
requestAnimationFrame(animateMouth)
listenToOperator()
loadCapabilities()
// Show the conversation this browser had open, if the server still has it.
loadSessions().then((sessions) => {
  if (sessions.some((session) => session.id === state.sessionId) && messages.children.length === 0) resume(state.sessionId)
})
