import { type ParseArgsOptionsConfig, parseArgs } from 'node:util'
import { isAppError } from '../errors/app-error.ts'

/** A mistake in how a command was called: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** A command that ran but could not do its job (unknown e-mail, bad state): exit code 1. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CommandError'
  }
}

/** Runs `work`; an operation the service refused (AppError) becomes a CommandError naming each problem. */
export async function refusalsAsCommandErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (isAppError(error)) {
      const details = Array.isArray(error.details)
        ? (error.details as Array<{ field: string; message: string }>).map((item) => `${item.field}: ${item.message}`).join('; ')
        : error.message
      throw new CommandError(details)
    }
    throw error
  }
}

export interface CliOutput {
  out(text: string): void
  err(text: string): void
  /** The standard error when it is a terminal: long commands draw a progress bar on it (progress.ts). */
  terminal?: NodeJS.WritableStream
}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>
  positionals: string[]
}

export interface Command {
  name: string
  summary: string
  /** The arguments after the command's path, e.g. `--email E --password P [--admin]`. */
  usage: string
  options?: ParseArgsOptionsConfig
  /** Number of positional arguments accepted: exactly, or [min, max]. */
  positionals?: number | [number, number]
  run(args: ParsedArgs, output: CliOutput): Promise<number | undefined>
}

export interface CommandGroup {
  name: string
  summary: string
  commands: Array<Command | CommandGroup>
}

function isGroup(entry: Command | CommandGroup): entry is CommandGroup {
  return 'commands' in entry
}

function groupHelp(path: string[], group: CommandGroup): string {
  const width = Math.max(...group.commands.map((entry) => entry.name.length)) + 2
  const lines = group.commands.map((entry) => `  ${entry.name.padEnd(width)}${entry.summary}`)
  return [
    `Usage: ${[...path, '<command>'].join(' ')} [options]`,
    '',
    group.summary,
    '',
    'Commands:',
    ...lines,
    '',
    `Run \`${path.join(' ')} <command> --help\` for a command's options.`,
  ].join('\n')
}

function commandHelp(path: string[], command: Command): string {
  return [`Usage: ${path.join(' ')} ${command.usage}`.trimEnd(), '', command.summary].join('\n')
}

/**
 * Runs the command named by `argv` under `root`: prints help for `--help` (or a bare group),
 * reports misuse with exit code 2 and failures with exit code 1, never a stack trace.
 */
export async function runCommand(root: CommandGroup, argv: string[], output: CliOutput): Promise<number> {
  const path = [root.name]
  let group = root
  let rest = argv
  for (;;) {
    const [word, ...remaining] = rest
    if (word === undefined || word === '--help' || word === '-h' || word === 'help') {
      output.out(groupHelp(path, group))
      return word === undefined && group !== root ? 2 : 0
    }
    const entry = group.commands.find((candidate) => candidate.name === word)
    if (!entry) {
      output.err(`${path.join(' ')}: unknown command "${word}". Run \`${path.join(' ')} --help\` for the list.`)
      return 2
    }
    path.push(word)
    rest = remaining
    if (isGroup(entry)) {
      group = entry
      continue
    }
    return runLeaf(path, entry, rest, output)
  }
}

async function runLeaf(path: string[], command: Command, argv: string[], output: CliOutput): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    output.out(commandHelp(path, command))
    return 0
  }
  try {
    const parsed = parseArgs({ args: argv, options: command.options ?? {}, allowPositionals: true, strict: true })
    const [min, max] = typeof command.positionals === 'number' ? [command.positionals, command.positionals] : (command.positionals ?? [0, 0])
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw new UsageError(`expected ${min === max ? min : `${min} to ${max}`} argument(s), got ${parsed.positionals.length}`)
    }
    return (await command.run(parsed as ParsedArgs, output)) ?? 0
  } catch (error) {
    const name = path.join(' ')
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      output.err(`${name}: ${(error as Error).message}\nUsage: ${name} ${command.usage}`)
      return 2
    }
    if (error instanceof CommandError) {
      output.err(`${name}: ${error.message}`)
      return 1
    }
    throw error
  }
}

/** Reads a required string option, or fails with a usage error naming it. */
export function requireOption(args: ParsedArgs, name: string): string {
  const value = args.values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

/** The `--json` flag of commands that print a result. */
export const jsonOption = { json: { type: 'boolean' } } as const

/** Prints a command's result: `json` as one line of JSON with --json, else `text` for a person. */
export function printResult(output: CliOutput, args: ParsedArgs, json: unknown, text: string): void {
  output.out(args.values.json ? JSON.stringify(json) : text)
}

/** Reads an optional whole-number option within [min, max], or fails with a usage error naming it. */
export function integerOption(args: ParsedArgs, name: string, range: { min?: number; max?: number } = {}): number | undefined {
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range
  const value = args.values[name]
  if (value === undefined) return undefined
  const number = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN
  if (!(number >= min && number <= max)) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`)
  return number
}
