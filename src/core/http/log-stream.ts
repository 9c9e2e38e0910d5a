import { writeSync, writev } from 'node:fs'

const flushersAtExit = new Set<() => void>()
process.once('exit', () => {
  for (const flush of flushersAtExit) flush()
})

/**
 * A destination for pino that batches lines: each line is encoded straight into a byte buffer
 * and one writev(2) goes out per batch (64 KiB, or what arrived within 50 ms), from the
 * thread pool. Lines are not kept as strings until the write: under load a pending batch
 * outlived young-generation collections and was copied or promoted by each of them. pino's own
 * asynchronous destination (sonic-boom) re-measures its whole pending buffer on every line.
 * What is still pending when the process exits is written synchronously, so no line is lost
 * on a normal exit (a crash of the process itself may lose the last batch).
 */
export function createBatchedStream(fd = 1, batchBytes = 64 * 1024, maxDelayMs = 50): { write(line: string): void; flushSync(): void } {
  let buffer = Buffer.allocUnsafe(batchBytes)
  let used = 0
  /** Batches handed over for writing, oldest first; the first is in flight while `writing`. */
  let queued: Buffer[] = []
  let writing = false
  let scheduled = false

  const seal = () => {
    if (used === 0) return
    queued.push(buffer.subarray(0, used))
    buffer = Buffer.allocUnsafe(batchBytes)
    used = 0
  }
  const flush = () => {
    scheduled = false
    seal()
    if (writing || queued.length === 0) return
    const batches = queued
    queued = []
    writing = true
    writev(fd, batches, (error, written) => {
      writing = false
      // A pipe in non-blocking mode can take part of a batch (or none: EAGAIN); keep the rest.
      const rest = unwritten(batches, error ? 0 : written)
      if (error && (error as NodeJS.ErrnoException).code !== 'EAGAIN') rest.length = 0
      queued = rest.concat(queued)
      if (queued.length > 0 || used > 0) schedule()
    })
  }
  // Lines wait at most maxDelayMs: flushing on every turn of the event loop would cost one
  // thread-pool write per turn, which under load was a seventh of the CPU.
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setTimeout(flush, maxDelayMs).unref()
  }
  const flushSync = () => {
    seal()
    for (const batch of queued.splice(0)) {
      try {
        for (let offset = 0; offset < batch.length; ) offset += writeSync(fd, batch, offset)
      } catch {
        // Nowhere left to report a failing log destination.
      }
    }
  }
  flushersAtExit.add(flushSync)

  return {
    write(line: string) {
      // At most three bytes per UTF-16 unit, so a line that fits by this bound is never cut.
      if (used + line.length * 3 > batchBytes) {
        seal()
        if (line.length * 3 > batchBytes) queued.push(Buffer.from(line))
        else used = buffer.write(line)
        flush()
        return
      }
      used += buffer.write(line, used)
      schedule()
    },
    flushSync,
  }
}

function unwritten(batches: Buffer[], written: number): Buffer[] {
  const rest: Buffer[] = []
  for (const batch of batches) {
    if (written >= batch.length) written -= batch.length
    else {
      rest.push(written > 0 ? batch.subarray(written) : batch)
      written = 0
    }
  }
  return rest
}
