// The recordings of Debian's pocketsphinx-testdata with their transcripts, and the word error
// rate's edit distance: what bench/avatar-voice-wer.ts and bench/avatar-voice-decoder.ts score.
import { readFileSync } from 'node:fs'

const TESTDATA = '/usr/share/pocketsphinx/test/data'
const SETS = [
  { dir: `${TESTDATA}/librivox`, transcription: `${TESTDATA}/librivox/transcription` },
  { dir: `${TESTDATA}/cards`, transcription: `${TESTDATA}/cards/cards.transcription` },
]

/** The ten recordings (five LibriVox sentences, five card-game phrases) and the words said in each. */
export function references(): Array<{ file: string; words: string[] }> {
  const out: Array<{ file: string; words: string[] }> = []
  for (const set of SETS) {
    for (const line of readFileSync(set.transcription, 'utf8').split('\n')) {
      const match = /^<s>(.*)<\/s>\s*\((.+)\)$/.exec(line.trim())
      if (match) out.push({ file: `${set.dir}/${match[2]}.wav`, words: words(match[1]) })
    }
  }
  return out
}

export function words(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean)
}

/** Word-level edit distance (substitutions, insertions, deletions). */
export function editDistance(a: string[], b: string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = row
  }
  return previous[b.length]
}
