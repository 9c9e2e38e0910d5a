import websocket from '@fastify/websocket'
import type { AvatarMetrics } from '../../metrics.ts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { RawData, WebSocket } from 'ws'
import type { AppError } from '../../../../core/errors/app-error.ts'
import { normalizeError } from '../../../../core/errors/normalize.ts'
import type { Lifecycle } from '../../../../core/http/lifecycle.ts'
import type { RateLimiter } from '../../../../core/http/rate-limit.ts'
import { cutText } from '../../../../core/text.ts'
import { avatarError, ErrorSchema, formatAvatarError } from '../../errors.ts'
import { compileStrictValidator, strictBodyCompiler } from '../../validation.ts'
import { rateLimitExceeded, rateLimitKey } from './chat.limits.ts'
import { type ChatFrame, ChatSocketQuerySchema, chatFrameSchema } from './chat.schemas.ts'
import type { ChatService } from './chat.service.ts'
import type { ChatEvent, TurnRunner } from './chat.turn.ts'
import type { ControlService } from '../control/index.ts'
import { createVoiceSession, type VoiceChat, type VoiceDeps, type VoiceEvent, type VoiceSession } from '../voice/index.ts'

export interface ChatSocketOptions {
  chat: ChatService
  runTurn: TurnRunner
  metrics: AvatarMetrics
  /** Absent when AVATAR_RATE_LIMIT is 0. */
  limiter?: RateLimiter
  maxTextLength: number
  /** Interval of WebSocket pings (AVATAR_WS_HEARTBEAT); 0 turns them off. */
  heartbeatMs: number
  lifecycle: Lifecycle
  /** The operator channel: its messages for the socket's session go out as frames too. */
  control: Pick<ControlService, 'follow'>
  /** Voice mode (`voice.start` and binary audio frames); absent, such frames are refused. */
  voice?: VoiceDeps
}

/** Close codes (RFC 6455 §7.4.1). */
const GOING_AWAY = 1001
const POLICY_VIOLATION = 1008
/** How long a closing peer has to answer the server's close frame before its socket is cut. */
const CLOSE_WAIT_MS = 1000

/**
 * Frames a client may send while a turn runs; they are answered in order once it ends. A
 * client that piles up more is not following the protocol (one message, then its reply) and
 * is closed with 1008 instead of being buffered without bound.
 */
const MAX_WAITING_FRAMES = 8
/** Bytes queued on a socket past which a turn waits for its client to read. */
const WRITE_HIGH_WATER = 64 * 1024

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (Array.isArray(data)) return Buffer.concat(data)
  return Buffer.from(data)
}

/** A text frame of voice mode (`{"type":"voice.…"}`), or undefined for any other frame. */
function voiceCommand(data: RawData): ({ type: string } & Record<string, unknown>) | undefined {
  const text = toBuffer(data)
  // Cheap test first: chat frames, most of the traffic, are parsed once, in their turn.
  if (!text.includes('voice.')) return undefined
  let frame: unknown
  try {
    frame = JSON.parse(text.toString())
  } catch {
    return undefined
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return undefined
  const type = (frame as { type?: unknown }).type
  return typeof type === 'string' && type.startsWith('voice.') ? (frame as { type: string } & Record<string, unknown>) : undefined
}

function upgradeRequired(): AppError {
  return avatarError('upgrade_required', 'This endpoint speaks WebSocket only; open it with a WebSocket client', { headers: { upgrade: 'websocket' } })
}

/** The `{detail}` sentence an error would have over HTTP: the message of its error frame. */
function detailOf(error: unknown): string {
  return formatAvatarError(normalizeError(error)).detail
}

const SocketDescription = [
  'The chat over a WebSocket, for clients that keep one connection open (the meta-human web app\'s `websocket` transport).',
  'Open `ws://<host>/ws?session_id=<id>`; every exchange is stored under that session, as `sessionId` does over HTTP.',
  'Send text frames `{"type":"chat","userText":…,"meta":{…}}` (the fields and rules of the `POST /v1/chat` body); each is answered',
  'with `{"type":"token","content"}` frames, then one `{"type":"done","replyText","emotion","action"}` or one `{"type":"error","message"}`,',
  'the events of `POST /v1/chat/stream`. A bad frame or a frame over the rate limit is answered with an error frame and the socket stays open.',
  'What operators send to the session arrives as `{"type":"say",…}` and `{"type":"act",…}` frames, the events of `GET /v1/session/{session_id}/events`.',
  'Voice mode: after `{"type":"voice.start","sampleRate":16000}` the client streams its microphone as binary frames (16-bit PCM, 16 kHz, mono;',
  'or, after `{"type":"voice.start","encoding":"opus"}`, one raw Opus packet per frame, as WebCodecs AudioEncoder writes them);',
  'each turn is detected (`vad`), recognised (`transcript`: partial ones with `final:false` while the person speaks, from the local English recogniser; the final one at the end of the turn), answered (`token`…) and spoken sentence by sentence (`audio`: WAV as base64 with its',
  'viseme timeline) before `done`; the reply starts at the person\'s pause and is sent the moment the turn ends when the transcript is the one guessed.',
  'A sound over the avatar, while it answers or while the page plays the answer, pauses it (`paused`); it is interrupted (`interrupted`) when the sound lasts minSpeechMs, else resumed (`resumed`).',
  '`{"type":"voice.stop"}` ends voice mode.',
  'The server pings every AVATAR_WS_HEARTBEAT and closes a socket that did not answer the previous ping.',
  'Without a WebSocket upgrade the route answers 426. See docs/avatar-protocol.md.',
].join(' ')

export const chatSocketRoutes: FastifyPluginAsyncTypebox<ChatSocketOptions> = async (app, options) => {
  const { chat, runTurn, limiter, lifecycle } = options
  const validateFrame = compileStrictValidator(chatFrameSchema(options.maxTextLength))
  // Aborted when the app starts closing: idle sockets close at once, busy ones after their turn.
  const closing = new AbortController()

  await app.register(websocket, {
    // The ceiling of an HTTP body: a larger frame is refused by closing the socket with 1009.
    options: { maxPayload: app.initialConfig.bodyLimit },
    preClose(done) {
      closing.abort()
      done()
    },
  })

  // Only this route takes upgrades. Without this, an `Upgrade: websocket` request to any other
  // path would be answered over a socket that Node has handed over for good and nobody closes
  // (and `app.close()` would wait for it); refused upgrades are ordinary requests instead.
  const socketPath = `${app.prefix}/ws`
  // (Node 24's server option, not yet in its type definitions.)
  const server = app.server as typeof app.server & { shouldUpgradeCallback: (request: IncomingMessage) => boolean }
  server.shouldUpgradeCallback = (request) => (request.url ?? '').split('?')[0] === socketPath

  /**
   * Writes one event. As on the event stream, the model goes on while the client keeps up and
   * waits for it once it reads slower than the model writes (WRITE_HIGH_WATER bytes queued).
   * Events go out together: the connection is corked at a turn's first event and uncorked in
   * the check phase of the event loop's next iteration (a nested setImmediate), so a model's
   * tokens that come several at once share one write, and a reply whose model ended at once
   * (the mock, a short cached answer) shares it with its `done`, sent once the group commit
   * (a setImmediate of the iteration the tokens came in) is durable. A token waits at most one
   * iteration of the loop, which does not block while an immediate is pending.
   */
  const sendEvent = (socket: WebSocket, connection: Socket, event: ChatEvent | VoiceEvent): Promise<void> => {
    if (socket.readyState !== socket.OPEN) return Promise.resolve()
    if (connection.writableCorked === 0) {
      connection.cork()
      setImmediate(() => setImmediate(() => connection.uncork()))
    }
    if (socket.bufferedAmount < WRITE_HIGH_WATER) {
      socket.send(JSON.stringify(event))
      return Promise.resolve()
    }
    return new Promise((resolve) => socket.send(JSON.stringify(event), () => resolve()))
  }

  /**
   * Reads one frame into a chat request, or the sentence of its error frame. `limitKey` is the
   * socket's rate-limit key, taken once from its handshake (it cannot change on an open socket).
   */
  async function readFrame(data: RawData, isBinary: boolean, limitKey: string | undefined): Promise<ChatFrame | string> {
    // Every frame is a request against the client's chat budget, as every POST is over HTTP.
    if (limiter && limitKey !== undefined) {
      const result = await limiter.hit(limitKey)
      if (!result.allowed) return detailOf(rateLimitExceeded(result))
    }
    if (isBinary) return 'Binary frames are not accepted; send JSON as text'
    let frame: unknown
    try {
      frame = JSON.parse(data.toString())
    } catch {
      return 'Malformed JSON in message'
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return 'message must be a JSON object'
    const type = (frame as { type?: unknown }).type
    if (type !== 'chat') {
      const name = typeof type === 'string' ? type : JSON.stringify(type ?? null)
      // Echoed for the client's developer, but never a megabyte of it.
      return `Unknown message type: ${name.length > 40 ? `${cutText(name, 40)}…` : name}`
    }
    const checked = validateFrame(frame)
    if ('error' in checked) return detailOf({ validation: checked.error, validationContext: 'body' })
    return checked.value
  }

  async function answer(
    socket: WebSocket,
    request: FastifyRequest,
    sessionId: string,
    limitKey: string | undefined,
    gone: AbortSignal,
    data: RawData,
    isBinary: boolean,
  ) {
    const log: FastifyBaseLogger = request.log
    const started = performance.now()
    let ended: ChatEvent['type'] | 'closed' = 'closed'
    let persona: string | undefined
    const send = (event: ChatEvent) => {
      if (event.type !== 'token') ended = event.type
      return sendEvent(socket, request.raw.socket, event)
    }
    try {
      const frame = await readFrame(data, isBinary, limitKey)
      if (typeof frame === 'string') return await send({ type: 'error', message: frame })
      const prepared = await chat.prepare({ sessionId, userText: frame.userText, meta: frame.meta }, { log })
      persona = prepared.persona.id
      await runTurn(prepared, { log, clientGone: gone, send })
    } catch (error) {
      const normalized = normalizeError(error)
      if (normalized.internal) log.error({ err: error }, 'chat frame failed')
      await send({ type: 'error', message: detailOf(error) })
    } finally {
      // The socket's one HTTP log line is its handshake: each frame gets its own, as a POST would.
      log.info({ sessionId, persona, outcome: ended, responseTime: performance.now() - started }, 'websocket turn')
    }
  }

  /** What voice mode needs of the chat, for one socket: the same budget, turn and history as a chat frame. */
  function voiceChat(request: FastifyRequest, sessionId: string, limitKey: string | undefined): VoiceChat {
    return {
      async admit() {
        if (!limiter || limitKey === undefined) return undefined
        const result = await limiter.hit(limitKey)
        return result.allowed ? undefined : detailOf(rateLimitExceeded(result))
      },
      async stream(userText, meta, { signal, onToken }) {
        let prepared: Awaited<ReturnType<ChatService['prepare']>>
        try {
          prepared = await chat.prepare({ sessionId, userText, meta }, { log: request.log })
        } catch (error) {
          return { outcome: { type: 'error', message: detailOf(error) }, store: async () => {} }
        }
        const outcome = await chat.stream(prepared, { log: request.log, signal, onToken, store: false })
        const reply = outcome.type === 'done' ? outcome.reply : undefined
        return { outcome, store: (said) => chat.storeSpoken(prepared, reply, said) }
      },
    }
  }

  function serve(socket: WebSocket, request: FastifyRequest, sessionId: string) {
    const gone = new AbortController()
    const closed = options.metrics.streamOpened('websocket')
    // Every frame counts against the handshake's client (its key or address), hashed once here.
    const limitKey = limiter ? rateLimitKey(request) : undefined
    let waiting = 0
    let queue: Promise<void> = Promise.resolve()
    let voice: VoiceSession | undefined
    /** Runs `work` after every frame answered before it (one turn at a time, in order). */
    const enqueue = (work: () => Promise<void>) => {
      waiting++
      queue = queue
        .then(() => (gone.signal.aborted ? undefined : work()))
        .finally(() => {
          waiting--
          closeIfIdle(true)
        })
    }
    const openVoice = (deps: VoiceDeps) =>
      (voice ??= createVoiceSession(deps, {
        log: request.log,
        sessionId,
        chat: voiceChat(request, sessionId, limitKey),
        send: (event) => sendEvent(socket, request.raw.socket, event),
        schedule: enqueue,
        gone: gone.signal,
      }))

    const closeIfIdle = (afterTurn: boolean) => {
      if (waiting > 0) return
      // After an answer while the server drains, as `Connection: close` on HTTP answers: the
      // client's next connection goes to an instance that stays.
      if (!closing.signal.aborted && !(afterTurn && lifecycle.draining)) return
      socket.close(GOING_AWAY, 'server shutting down')
      // A client that never answers the close frame must not hold the stop up (ws waits 30 s).
      setTimeout(() => socket.terminate(), CLOSE_WAIT_MS).unref()
    }
    const onClosing = () => closeIfIdle(false)
    closing.signal.addEventListener('abort', onClosing, { once: true })
    // Past the grace period a running turn is told to stop; a socket still open a moment later
    // (a turn that did not end, a close nobody answered) is cut, as HTTP connections are: an
    // open WebSocket would otherwise hold the server's close until the process is killed.
    const onDeadline = () => setTimeout(() => socket.terminate(), CLOSE_WAIT_MS).unref()
    lifecycle.deadline.addEventListener('abort', onDeadline, { once: true })

    let answeredPing = true
    const heartbeat =
      options.heartbeatMs > 0
        ? setInterval(() => {
            // Silent since the last ping: the peer or the path to it is gone without a close.
            if (!answeredPing) return socket.terminate()
            answeredPing = false
            socket.ping()
          }, options.heartbeatMs)
        : undefined
    heartbeat?.unref()
    socket.on('pong', () => (answeredPing = true))

    // Operator messages go out as they come, between a turn's frames if one is running (each is
    // a whole frame, told apart by its type).
    // The chat works without the channel: while Redis is unreachable the socket listens as soon
    // as it returns (and again after each outage).
    const stopListening = options.control.follow(sessionId, (message) => {
      if (socket.readyState === socket.OPEN) socket.send(message)
    })

    socket.on('close', () => {
      voice?.close()
      stopListening()
      closed()
      clearInterval(heartbeat)
      closing.signal.removeEventListener('abort', onClosing)
      lifecycle.deadline.removeEventListener('abort', onDeadline)
      // Stops the model of a running turn; its exchange is not stored.
      gone.abort(new Error('client disconnected'))
    })

    socket.on('message', (data, isBinary) => {
      answeredPing = true
      if (socket.readyState !== socket.OPEN) return
      // Voice mode's frames are taken at once, not after a running turn: the microphone keeps
      // streaming while the avatar answers (barge-in), and its replies queue as turns.
      const voiceDeps = options.voice
      if (voiceDeps) {
        if (isBinary) return openVoice(voiceDeps).audio(toBuffer(data))
        const command = voiceCommand(data)
        if (command) return openVoice(voiceDeps).command(command)
      }
      if (waiting > MAX_WAITING_FRAMES) return socket.close(POLICY_VIOLATION, 'too many messages waiting for a reply')
      // One turn at a time, in the order the frames came: each frame's events follow the previous one's end.
      enqueue(() => answer(socket, request, sessionId, limitKey, gone.signal, data, isBinary))
    })
    closeIfIdle(false)
  }

  app.route({
    method: 'GET',
    url: '/ws',
    // The same wording of a missing or bad session_id as of a bad body field.
    validatorCompiler: strictBodyCompiler,
    schema: {
      tags: ['avatar'],
      summary: 'Chat over a WebSocket (token, done and error frames, as the event stream)',
      description: SocketDescription,
      querystring: ChatSocketQuerySchema,
      response: {
        101: { description: 'Switching Protocols: the WebSocket is open', type: 'null' },
        400: ErrorSchema,
        426: ErrorSchema,
      },
    },
    wsHandler: (socket, request) => serve(socket, request, request.query.session_id),
    handler: async () => {
      throw upgradeRequired()
    },
  })
}
