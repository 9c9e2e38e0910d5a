import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'

/**
 * A stand-in for Edge's read-aloud WebSocket endpoint on 127.0.0.1: a minimal RFC 6455 server
 * (handshake, masked client frames, unmasked server frames) that answers each `ssml` message
 * with `audio` binary messages (2-byte header length, headers, MP3 bytes) and `turn.end`.
 */
export interface FakeEdge {
  url: string
  /** What each connection asked: its query string and the text messages it sent. */
  connections: Array<{ query: URLSearchParams; headers: IncomingMessage['headers']; messages: string[] }>
  /** Upgrade requests received, refused ones included. */
  attempts: number
  close(): Promise<void>
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length
  const head = length < 126 ? Buffer.from([0x80 | opcode, length]) : Buffer.from([0x80 | opcode, 126, length >> 8, length & 255])
  return Buffer.concat([head, payload])
}

export async function startFakeEdge(audio: Buffer, options: { refuseFirst?: number } = {}): Promise<FakeEdge> {
  const connections: FakeEdge['connections'] = []
  let attempts = 0
  const sockets = new Set<Duplex>()
  const server = createServer((_request, response) => response.writeHead(426).end())
  server.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    attempts++
    if (attempts <= (options.refuseFirst ?? 0)) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n')
      return
    }
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    const key = String(request.headers['sec-websocket-key'])
    const accept = createHash('sha1')
      .update(key + GUID)
      .digest('base64')
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`)
    const connection = { query: new URL(request.url ?? '/', 'http://x').searchParams, headers: request.headers, messages: [] as string[] }
    connections.push(connection)
    let buffered = Buffer.alloc(0)
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data])
      while (buffered.length >= 2) {
        const opcode = buffered[0] & 15
        let length = buffered[1] & 127
        let offset = 2
        if (length === 126) {
          length = buffered.readUInt16BE(2)
          offset = 4
        } else if (length === 127) {
          length = Number(buffered.readBigUInt64BE(2))
          offset = 10
        }
        if (buffered.length < offset + 4 + length) return
        const mask = buffered.subarray(offset, offset + 4)
        const payload = Buffer.from(buffered.subarray(offset + 4, offset + 4 + length))
        for (let index = 0; index < payload.length; index++) payload[index] ^= mask[index % 4]
        buffered = buffered.subarray(offset + 4 + length)
        if (opcode === 8) {
          socket.end(frame(8, Buffer.alloc(0)))
          return
        }
        if (opcode !== 1) continue
        const text = payload.toString('utf8')
        connection.messages.push(text)
        if (!text.includes('Path:ssml')) continue
        // Answer in two audio messages, as Edge streams its MP3.
        const half = Math.floor(audio.length / 2)
        for (const part of [audio.subarray(0, half), audio.subarray(half)]) {
          const headers = Buffer.from('X-RequestId:1\r\nContent-Type:audio/mpeg\r\nPath:audio\r\n')
          const prefix = Buffer.from([headers.length >> 8, headers.length & 255])
          socket.write(frame(2, Buffer.concat([prefix, headers, part])))
        }
        socket.write(frame(1, Buffer.from('X-RequestId:1\r\nPath:turn.end\r\n\r\n{}')))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `ws://127.0.0.1:${port}/consumer/speech/synthesize/readaloud/edge/v1`,
    connections,
    get attempts() {
      return attempts
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
