import { once } from 'node:events'
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy between Triad and one of its dependencies (PostgreSQL, Redis) that the test can
 * break on purpose, the way networks and servers break:
 * - `down()`: stop listening (new connections are refused) and reset every open connection;
 * - `blackhole()`: keep accepting, forward nothing either way (a server that hangs);
 * - `deafen()`: forward what the client sends, drop every answer (what was sent is done, the reply is lost);
 * - `delay(ms)`: forward every chunk, in order, `ms` late (a slow network or a crawling server);
 * - `resetConnections()`: reset the open connections and go on accepting;
 * - `partition()`: a network partition after which the dependency no longer knows the open
 *   connections (it restarted, or dropped them meanwhile): forward nothing, close their
 *   dependency's side, and leave Triad's side open and silent; once `up()`, such a connection
 *   is reset only when Triad next sends on it, as a host answers a packet for a connection it
 *   does not know (an idle connection notices nothing);
 * - `up()`: back to forwarding everything at once.
 * Nothing installs from the registries that does this, so it is the project's own.
 */
export interface FaultProxy {
  /** The port Triad should connect to (127.0.0.1). */
  readonly port: number
  /** `host:port` of the proxy, to put in a connection URL in place of the dependency's. */
  readonly address: string
  /** Connections open through the proxy now. */
  readonly openConnections: number
  down(): Promise<void>
  blackhole(): void
  deafen(): void
  partition(): void
  delay(ms: number): void
  resetConnections(): void
  up(): Promise<void>
  close(): Promise<void>
}

type Mode = 'pass' | 'blackhole' | 'deaf'

/** Writes chunks to `target` `delayMs` late, never reordering them. */
function delayedWriter(target: Socket, delayOf: () => number): (chunk: Buffer) => void {
  let nextAt = 0
  return (chunk) => {
    const delay = delayOf()
    if (delay === 0 && nextAt <= performance.now()) {
      target.write(chunk)
      return
    }
    nextAt = Math.max(nextAt, performance.now() + delay)
    setTimeout(() => {
      if (!target.destroyed) target.write(chunk)
    }, nextAt - performance.now())
  }
}

export async function startFaultProxy(target: { host?: string; port: number }): Promise<FaultProxy> {
  const targetHost = target.host ?? '127.0.0.1'
  let mode: Mode = 'pass'
  let delayMs = 0
  const pairs = new Set<[Socket, Socket]>()
  /** Triad's sides of the connections a partition cut off. */
  const severed = new Set<Socket>()

  const onConnection = (client: Socket) => {
    const upstream = createConnection({ host: targetHost, port: target.port })
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const toUpstream = delayedWriter(upstream, () => delayMs)
    const toClient = delayedWriter(client, () => delayMs)
    client.on('data', (chunk: Buffer) => {
      if (severed.has(client)) {
        if (mode === 'pass') client.resetAndDestroy()
      } else if (mode !== 'blackhole') toUpstream(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (mode === 'pass') toClient(chunk)
    })
    const end = () => {
      pairs.delete(pair)
      severed.delete(client)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', () => {
      if (!severed.has(client)) end()
    })
  }

  let server: Server = createServer(onConnection)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port

  const resetConnections = () => {
    for (const [client, upstream] of pairs) {
      client.resetAndDestroy()
      upstream.destroy()
    }
    pairs.clear()
    for (const client of severed) client.resetAndDestroy()
    severed.clear()
  }

  return {
    port,
    address: `127.0.0.1:${port}`,
    get openConnections() {
      return pairs.size
    },
    async down() {
      if (server.listening) {
        const closed = once(server, 'close')
        server.close()
        resetConnections()
        await closed
      }
      resetConnections()
    },
    blackhole() {
      mode = 'blackhole'
    },
    deafen() {
      mode = 'deaf'
    },
    partition() {
      mode = 'blackhole'
      for (const pair of pairs) {
        severed.add(pair[0])
        pair[1].destroy()
      }
      pairs.clear()
    },
    delay(ms) {
      mode = 'pass'
      delayMs = ms
    },
    resetConnections,
    async up() {
      mode = 'pass'
      delayMs = 0
      if (!server.listening) {
        server = createServer(onConnection)
        server.listen(port, '127.0.0.1')
        await once(server, 'listening')
      }
    },
    async close() {
      resetConnections()
      if (server.listening) {
        const closed = once(server, 'close')
        server.close()
        await closed
      }
    },
  }
}
