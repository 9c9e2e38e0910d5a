const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

export const DURATION_PATTERN = '^\\d+(ms|s|m|h|d)$'

/** Parses a duration such as `500ms`, `30s`, `30m`, `24h` or `7d` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) throw new Error(`not a duration: ${text}`)
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}
