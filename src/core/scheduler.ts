import type { Clock } from './clock.ts'

/**
 * Where delayed work is scheduled. Background workers take a Scheduler (as services take a
 * Clock) so that a test moves time and runs what is due, instead of sleeping.
 */
export interface Scheduler {
  /** Runs `task` after `ms`; the handle cancels it. */
  schedule(task: () => void | Promise<void>, ms: number): SchedulerHandle
}

export interface SchedulerHandle {
  cancel(): void
}

/** Node's timers; the timer does not hold the process open. */
export const systemScheduler: Scheduler = {
  schedule(task, ms) {
    const timer = setTimeout(() => void task(), ms)
    timer.unref()
    return { cancel: () => clearTimeout(timer) }
  },
}

export interface ManualScheduler extends Scheduler {
  /** Runs, one after another and awaiting each, every task due at the clock's time (tasks they schedule included, when due). */
  runDue(): Promise<number>
  /** How many tasks wait. */
  pending(): number
}

/** A scheduler whose tasks run only when `runDue()` is called, by the given (manual) clock. */
export function createManualScheduler(clock: Clock): ManualScheduler {
  let sequence = 0
  const tasks = new Map<number, { due: number; task: () => void | Promise<void> }>()
  return {
    schedule(task, ms) {
      const id = ++sequence
      tasks.set(id, { due: clock.now().getTime() + Math.max(0, ms), task })
      return { cancel: () => tasks.delete(id) }
    },
    async runDue() {
      let ran = 0
      for (;;) {
        const now = clock.now().getTime()
        const next = [...tasks.entries()].filter(([, item]) => item.due <= now).sort((a, b) => a[1].due - b[1].due || a[0] - b[0])[0]
        if (!next) return ran
        tasks.delete(next[0])
        ran++
        await next[1].task()
      }
    },
    pending: () => tasks.size,
  }
}
