/** Why a reply's frames are held back: it answers a turn not yet ended, or the person started speaking over it. */
export type HoldReason = 'unconfirmed' | 'paused'

/**
 * The way out of one reply's frames: sent at once, or held back while any reason holds them,
 * then sent in order when the last reason goes, or dropped. The reply runs on either way; only
 * what reaches the socket waits.
 */
export interface ReplyOutlet<Event> {
  /** Sends the frame, or queues it while held; `onSent` runs when it is handed to the socket. Nothing after `close`. */
  emit(event: Event, onSent?: () => void): Promise<void>
  hold(reason: HoldReason): void
  /** The reason no longer holds: with no other, the queued frames go out, in order. */
  release(reason: HoldReason): void
  /** Drops what is queued and everything after. */
  close(): void
  readonly closed: boolean
  /** True once nothing holds the frames (at once if nothing does), false if the outlet closed first. */
  flowing(): Promise<boolean>
}

export function createReplyOutlet<Event>(send: (event: Event) => Promise<void>, holds: HoldReason[] = []): ReplyOutlet<Event> {
  const reasons = new Set<HoldReason>(holds)
  let queue: Array<{ event: Event; onSent?: () => void }> = []
  let closed = false
  let waiters: Array<(flowing: boolean) => void> = []

  const settle = (flowing: boolean) => {
    for (const wake of waiters) wake(flowing)
    waiters = []
  }
  const deliver = (event: Event, onSent?: () => void) => {
    onSent?.()
    return send(event)
  }

  return {
    emit(event, onSent) {
      if (closed) return Promise.resolve()
      if (reasons.size > 0) {
        queue.push({ event, onSent })
        return Promise.resolve()
      }
      return deliver(event, onSent)
    },
    hold(reason) {
      if (!closed) reasons.add(reason)
    },
    release(reason) {
      if (closed || !reasons.delete(reason) || reasons.size > 0) return
      const due = queue
      queue = []
      for (const { event, onSent } of due) void deliver(event, onSent)
      settle(true)
    },
    close() {
      if (closed) return
      closed = true
      queue = []
      reasons.clear()
      settle(false)
    },
    get closed() {
      return closed
    },
    flowing() {
      if (closed) return Promise.resolve(false)
      if (reasons.size === 0) return Promise.resolve(true)
      return new Promise((resolve) => waiters.push(resolve))
    },
  }
}
