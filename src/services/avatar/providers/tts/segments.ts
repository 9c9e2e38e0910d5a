// Long texts are synthesised one segment at a time so that a request never holds more than
// one segment's audio, and so that segments of concurrent requests interleave on the pool.
const SENTENCE_END = /[.!?;。！？；…\n]/u
const CLAUSE_END = /[,:，、：]/u

/**
 * Splits `text` into segments of at most `max` characters, cutting after a sentence end if
 * one is in the second half of the window, else after a clause mark, else at a space, else
 * anywhere (Chinese has no spaces). `firstMax` may keep the first segment shorter.
 */
export function splitIntoSegments(text: string, max = 240, firstMax = 120): string[] {
  const segments: string[] = []
  let rest = text.trim()
  while (rest.length > 0) {
    const limit = segments.length === 0 ? firstMax : max
    if (rest.length <= limit) {
      segments.push(rest)
      break
    }
    const cut = findCut(rest, limit)
    const segment = rest.slice(0, cut).trim()
    if (segment.length > 0) segments.push(segment)
    rest = rest.slice(cut).trim()
  }
  return segments
}

function findCut(text: string, limit: number): number {
  const window = text.slice(0, limit)
  const half = Math.floor(limit / 2)
  for (const pattern of [SENTENCE_END, CLAUSE_END]) {
    for (let index = window.length - 1; index >= half; index--) {
      if (pattern.test(window[index])) return index + 1
    }
  }
  const space = window.lastIndexOf(' ')
  if (space >= half) return space + 1
  // Do not cut a surrogate pair in two.
  const code = text.charCodeAt(limit - 1)
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit
}
