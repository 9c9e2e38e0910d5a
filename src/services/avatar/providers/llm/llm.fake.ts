import { setTimeout as sleep } from 'node:timers/promises'
import type { LlmMessage, LlmPort, LlmRequest } from './llm.port.ts'

export interface FakeLlmOptions {
  /** The pieces the model "writes"; their concatenation is the whole reply. */
  pieces?: string[]
  /** Delay before each piece, in milliseconds. */
  delayMs?: number
  /** Fail before the first piece (like an HTTP 500 or a refused connection). */
  failBeforeFirst?: boolean
  /** Fail after this many pieces (a connection that drops mid-reply). */
  failAfter?: number
}

/**
 * A deterministic stand-in for a model, for tests and local runs: it replies with the given
 * pieces (by default an echo with markers) and records every request it received.
 */
export function createFakeLlm(options: FakeLlmOptions = {}) {
  const requests: LlmMessage[][] = []
  const piecesFor = (request: LlmRequest) => {
    if (options.pieces) return options.pieces
    const last = request.messages.at(-1)?.content ?? ''
    return ['[emotion:happy]', '[action:nod] ', 'You', ' said:', ` ${last}`]
  }
  async function* run(request: LlmRequest): AsyncGenerator<string> {
    requests.push(request.messages)
    const pieces = piecesFor(request)
    for (let index = 0; index < pieces.length; index++) {
      if (options.delayMs) await sleep(options.delayMs, undefined, { signal: request.signal })
      request.signal.throwIfAborted()
      if (options.failBeforeFirst || options.failAfter === index) throw new Error('fake model failure')
      yield pieces[index]
    }
    if (options.failBeforeFirst) throw new Error('fake model failure')
  }
  const port: LlmPort = {
    name: 'fake',
    async complete(request) {
      let text = ''
      for await (const piece of run(request)) text += piece
      return text
    },
    stream: run,
  }
  return Object.assign(port, { requests })
}
