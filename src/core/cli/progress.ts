import { Presets, SingleBar } from 'cli-progress'
import type { CliOutput } from './command.ts'

/**
 * Progress of a long command (`triad backup`, `restore`, `payments vault rotate-key`, `migrate`),
 * always on the standard error, so the standard output stays what it was (`--json` stays JSON):
 * a bar (cli-progress) when the standard error is a terminal, otherwise a line every 10 % of the
 * work or every 5 s, whichever comes first; and at the end one summary line with the counts and
 * the time taken.
 */
export interface Progress {
  /** How much is done so far, and the total when it is first known or has changed. */
  update(done: number, total?: number): void
  /** Ends the bar (or the lines) with `<label>: <summary>, <seconds> s`. */
  finish(summary: string): void
}

export interface ProgressOptions {
  /** What is running, first on every line: `backup`, `vault rotate-key`. */
  label: string
  /** What is counted: `pages`, `cards`, `migrations`. */
  unit: string
  total: number
  /** Milliseconds since some fixed point (tests); performance.now() by default. */
  now?: () => number
}

/** At most this long without a line when the standard error is not a terminal. */
const LINE_EVERY_MS = 5_000
/** And a line at every tenth of the total. */
const LINE_STEPS = 10

const count = (value: number) => value.toLocaleString('en-US')
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

export function startProgress(output: CliOutput, options: ProgressOptions): Progress {
  const now = options.now ?? (() => performance.now())
  const started = now()
  const summaryLine = (summary: string) => `${options.label}: ${summary}, ${seconds(now() - started)}`
  if (output.terminal) return barProgress(output.terminal, options, summaryLine)

  let total = options.total
  let lastLineAt = started
  let lastStep = 0
  return {
    update(done, newTotal) {
      if (newTotal !== undefined) total = newTotal
      // In integers: 0.3 / 0.1 is 2.9999999999999996.
      const step = total > 0 ? Math.floor((done * LINE_STEPS) / total) : 0
      if (step <= lastStep && now() - lastLineAt < LINE_EVERY_MS) return
      lastStep = Math.max(step, lastStep)
      lastLineAt = now()
      const percent = total > 0 ? ` (${Math.floor((done / total) * 100)} %)` : ''
      output.err(`${options.label}: ${count(done)}/${count(total)} ${options.unit}${percent}, ${seconds(lastLineAt - started)}`)
    },
    finish(summary) {
      output.err(summaryLine(summary))
    },
  }
}

function barProgress(terminal: NodeJS.WritableStream, options: ProgressOptions, summaryLine: (summary: string) => string): Progress {
  const bar = new SingleBar(
    { stream: terminal, format: `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit} | {duration_formatted}`, hideCursor: true, clearOnComplete: true },
    Presets.shades_classic,
  )
  bar.start(options.total, 0)
  return {
    update(done, total) {
      if (total !== undefined) bar.setTotal(total)
      bar.update(done)
    },
    finish(summary) {
      bar.stop()
      terminal.write(`${summaryLine(summary)}\n`)
    },
  }
}
