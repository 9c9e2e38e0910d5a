import { once } from 'node:events'
import { connect as connectTcp, isIP, type Socket } from 'node:net'
import { Duplex } from 'node:stream'
import { connect as connectTls, type ConnectionOptions } from 'node:tls'

/** PostgreSQL's SSLRequest: the message length (8) and the request code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
const TLS_OFFERED = 0x53 // 'S'
const TLS_REFUSED = 0x4e // 'N'
/** The type byte of an ErrorResponse: as the server's first answer, it refused the session. */
const ERROR_RESPONSE = 0x45 // 'E'

/** The old connection's answer while the other transport is tried: given to pg if that fails. */
interface Held {
  chunks: Buffer[]
  ended: boolean
  closed: boolean
}

/**
 * The socket node-postgres talks over (its `stream` option, with its own `ssl` off) for libpq's
 * sslmode=prefer and allow, which node-postgres does not have: it settles TLS or plain before
 * node-postgres sends its startup message, and falls back as libpq does.
 * - prefer: SSLRequest first; if the server answers 'N', the startup goes on over the same
 *   connection unencrypted; if the handshake fails, or the server's first answer over TLS is an
 *   ErrorResponse (pg_hba.conf has `hostnossl` for this user), once more without TLS.
 * - allow: plain first; if the server's first answer is an ErrorResponse (pg_hba.conf has only
 *   `hostssl` for this user), once more with TLS, unless the server offers none.
 * A second attempt replays the startup message node-postgres wrote, so only the server's first
 * answer can start one: an ErrorResponse after authentication has begun (a wrong password) is
 * final, where libpq would try the other transport too, for the same password to be refused
 * again. When the second attempt cannot be had, node-postgres gets the first attempt's answer.
 */
export class TlsFallbackSocket extends Duplex {
  private readonly mode: 'prefer' | 'allow'
  private readonly tls: ConnectionOptions
  private readonly aborted = new AbortController()
  /** Every socket opened (TCP, and TLS over it) that is not closed yet: destroyed with this stream. */
  private readonly opened = new Set<Socket>()
  /** The TCP sockets among them, which pg's socket settings apply to. */
  private readonly tcpSockets = new Set<Socket>()
  private target = { port: 5432, host: 'localhost' }
  /** The socket pg's bytes go over (the TLS socket when encrypted), and whether it is encrypted. */
  private wire: Socket | undefined
  private encrypted = false
  private detachWire = () => {}
  /** What pg wrote before the server's first answer (its startup message); undefined once the server answered. */
  private startup: Buffer[] | undefined = []
  private fellBack = false
  private held: Held | undefined
  /** pg's socket settings, applied to every TCP socket opened. */
  private settings: { noDelay?: boolean; keepAlive?: [boolean, number]; referenced: boolean } = { referenced: true }

  constructor(mode: 'prefer' | 'allow', tls: ConnectionOptions) {
    super()
    this.mode = mode
    this.tls = tls
  }

  connect(port: number, host = 'localhost'): this {
    this.target = { port, host }
    this.firstWire().then(
      ({ wire, encrypted }) => {
        if (this.destroyed) return
        this.use(wire, encrypted)
        this.emit('connect')
      },
      (error: Error) => this.destroy(error),
    )
    return this
  }

  private async firstWire(): Promise<{ wire: Socket; encrypted: boolean }> {
    if (this.mode === 'allow') return { wire: await this.openTcp(), encrypted: false }
    const tcp = await this.openTcp()
    const offered = await this.requestTls(tcp)
    if (!offered) return { wire: tcp, encrypted: false }
    try {
      return { wire: await this.handshake(tcp), encrypted: true }
    } catch (error) {
      if (this.aborted.signal.aborted) throw error
      this.fellBack = true
      return { wire: await this.openTcp(), encrypted: false }
    }
  }

  private async openTcp(): Promise<Socket> {
    this.aborted.signal.throwIfAborted()
    const socket = this.track(connectTcp(this.target))
    this.tcpSockets.add(socket)
    socket.once('close', () => this.tcpSockets.delete(socket))
    const { noDelay, keepAlive, referenced } = this.settings
    if (noDelay !== undefined) socket.setNoDelay(noDelay)
    if (keepAlive) socket.setKeepAlive(...keepAlive)
    if (!referenced) socket.unref()
    try {
      await once(socket, 'connect', { signal: this.aborted.signal })
    } catch (error) {
      socket.destroy()
      throw error
    }
    return socket
  }

  /** Sends SSLRequest: true if the server offers TLS, false if it says no (the connection stays usable, unencrypted). */
  private async requestTls(tcp: Socket): Promise<boolean> {
    tcp.write(SSL_REQUEST)
    const [answer] = (await once(tcp, 'data', { signal: this.aborted.signal })) as [Buffer]
    // Anything after the one byte came before the handshake, unencrypted: libpq refuses it too (CVE-2021-23222).
    if (answer.length !== 1 || (answer[0] !== TLS_OFFERED && answer[0] !== TLS_REFUSED)) {
      tcp.destroy()
      throw new Error('the server answered SSLRequest with something other than one byte S or N')
    }
    return answer[0] === TLS_OFFERED
  }

  private async handshake(tcp: Socket): Promise<Socket> {
    const { host } = this.target
    // SNI names a host, never an address (RFC 6066); pg does the same.
    const secure = this.track(connectTls({ ...this.tls, socket: tcp, host, servername: isIP(host) === 0 ? host : undefined }))
    try {
      await once(secure, 'secureConnect', { signal: this.aborted.signal })
    } catch (error) {
      secure.destroy()
      tcp.destroy()
      throw error
    }
    return secure
  }

  private track<S extends Socket>(socket: S): S {
    this.opened.add(socket)
    socket.once('close', () => this.opened.delete(socket))
    return socket
  }

  /** Makes `wire` the socket pg's bytes go over. */
  private use(wire: Socket, encrypted: boolean) {
    this.wire = wire
    this.encrypted = encrypted
    const onData = (chunk: Buffer) => this.received(wire, chunk)
    const onEnd = () => (this.held ? (this.held.ended = true) : this.push(null))
    const onClose = () => (this.held ? (this.held.closed = true) : this.destroy())
    const onError = (error: Error) => (this.held ? undefined : this.destroy(error))
    wire.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError)
    this.detachWire = () => {
      wire.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError)
      wire.on('error', () => {})
      wire.destroy()
    }
  }

  private received(wire: Socket, chunk: Buffer) {
    if (this.held) {
      this.held.chunks.push(chunk)
      return
    }
    const startup = this.startup
    this.startup = undefined
    // prefer falls back from a refused TLS session, allow from a refused plain one.
    const refused = startup !== undefined && chunk[0] === ERROR_RESPONSE && !this.fellBack && this.encrypted === (this.mode === 'prefer')
    if (refused) {
      this.held = { chunks: [chunk], ended: false, closed: false }
      this.fallBack(Buffer.concat(startup)).catch((error: Error) => this.destroy(error))
      return
    }
    if (!this.push(chunk)) wire.pause()
  }

  private async fallBack(startup: Buffer) {
    this.fellBack = true
    const other = await this.otherWire()
    if (this.destroyed) return
    if (!other) {
      this.release()
      return
    }
    this.detachWire()
    this.held = undefined
    this.use(other.wire, other.encrypted)
    other.wire.write(startup)
  }

  /** The transport the first attempt did not use; undefined if it cannot be had (the first answer then stands). */
  private async otherWire(): Promise<{ wire: Socket; encrypted: boolean } | undefined> {
    if (this.mode === 'prefer') {
      const tcp = await this.openTcp().catch(() => undefined)
      return tcp && { wire: tcp, encrypted: false }
    }
    const tcp = await this.openTcp().catch(() => undefined)
    if (!tcp) return undefined
    if (!(await this.requestTls(tcp).catch(() => false))) {
      tcp.destroy()
      return undefined
    }
    // A failed handshake is reported: it, not the refusal of plain, is what stands in the way.
    return { wire: await this.handshake(tcp), encrypted: true }
  }

  /** Gives pg the first attempt's answer, and what followed it. */
  private release() {
    const held = this.held
    this.held = undefined
    if (!held) return
    for (const chunk of held.chunks) this.push(chunk)
    if (held.ended || held.closed) this.push(null)
    if (held.closed) this.destroy()
  }

  override _read() {
    this.wire?.resume()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    if (!this.wire) {
      callback(new Error('written to before the connection was made'))
      return
    }
    this.startup?.push(Buffer.from(chunk))
    this.wire.write(chunk, callback)
  }

  override _final(callback: (error?: Error | null) => void) {
    this.wire?.end()
    callback()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    this.aborted.abort()
    for (const socket of this.opened) socket.destroy()
    callback(error)
  }

  // The net.Socket methods pg calls.
  setNoDelay(noDelay = true): this {
    this.settings.noDelay = noDelay
    for (const socket of this.tcpSockets) socket.setNoDelay(noDelay)
    return this
  }

  setKeepAlive(enable = false, initialDelay = 0): this {
    this.settings.keepAlive = [enable, initialDelay]
    for (const socket of this.tcpSockets) socket.setKeepAlive(enable, initialDelay)
    return this
  }

  ref(): this {
    this.settings.referenced = true
    for (const socket of this.tcpSockets) socket.ref()
    return this
  }

  unref(): this {
    this.settings.referenced = false
    for (const socket of this.tcpSockets) socket.unref()
    return this
  }
}
