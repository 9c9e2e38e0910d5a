import type { SpeechTiming } from '../../providers/tts/index.ts'

/**
 * The 15 mouth shapes of Oculus (Meta) lip-sync, which ARKit blend-shape rigs and most avatar
 * engines map to: silence, then one shape per group of sounds that look alike on the lips.
 */
export const VISEMES = ['sil', 'PP', 'FF', 'TH', 'DD', 'kk', 'CH', 'SS', 'nn', 'RR', 'aa', 'E', 'ih', 'oh', 'ou'] as const
type Viseme = (typeof VISEMES)[number]

/** One stretch of the audio with one mouth shape; `end_ms` is the next span's `start_ms`. */
export interface VisemeSpan {
  viseme: Viseme
  start_ms: number
  end_ms: number
}

/**
 * espeak-ng's phoneme names (it reports them in IPA, English `en-us` and Mandarin `cmn` alike)
 * and the viseme each shows. A phoneme event may hold several symbols (a diphthong `aʊ`, an
 * r-coloured vowel `ɑːɹ`, a Mandarin final `uei` or `onɡ`): it is read symbol by symbol, the
 * longest match first, and its time is shared between the shapes it goes through. Stress and
 * length marks (`ˈ ˌ ː`), espeak's `-` and combining diacritics (`i̪`, `n̩`) do not change the
 * shape and are dropped before the lookup. espeak-ng marks Mandarin retroflexes with a dot
 * (`s.` is ʂ of 十, `ts.h` is ʈʂʰ of 吃, `i.` the vowel after them) and aspiration with `h`
 * (`tsh` is 次, `kh` is 看).
 *
 * | viseme | lips and tongue | symbols |
 * |---|---|---|
 * | PP | lips closed | p b m, pʰ |
 * | FF | lower lip to teeth | f v |
 * | TH | tongue between teeth | θ ð |
 * | DD | tongue tip up, short | t d ɾ, tʰ |
 * | kk | back of tongue | k g ɡ ŋ x χ h ɣ, kʰ |
 * | CH | lips forward, teeth close | tʃ dʒ ʃ ʒ; Mandarin tɕ tɕʰ ɕ ʐ and the retroflexes ts. ts.h s. z. |
 * | SS | teeth close, spread | s z, Mandarin ts tsʰ |
 * | nn | tongue tip up, held | n l ɲ ɫ |
 * | RR | r-coloured | ɹ r ɻ ɚ ɝ |
 * | aa | wide open | a ɑ æ ʌ ɐ ɒ |
 * | E | half open, spread | e ɛ ə ɜ ɘ |
 * | ih | narrow, spread | i ɪ ɨ j, Mandarin i. (after retroflexes) |
 * | oh | half open, rounded | o ɔ ɤ |
 * | ou | narrow, rounded | u ʊ ɯ w, Mandarin y ɥ (rounded front) |
 * | sil | at rest | a pause (an empty name), ʔ |
 */
const PHONEME_VISEMES: Readonly<Record<string, Viseme>> = {
  // Several characters, looked up first.
  'ts.h': 'CH',
  'ts.': 'CH',
  's.': 'CH',
  'z.': 'CH',
  'i.': 'ih',
  tɕh: 'CH',
  tɕ: 'CH',
  tʃ: 'CH',
  dʒ: 'CH',
  tsh: 'SS',
  ts: 'SS',
  dz: 'SS',
  ph: 'PP',
  th: 'DD',
  kh: 'kk',
  // One character.
  p: 'PP',
  b: 'PP',
  m: 'PP',
  f: 'FF',
  v: 'FF',
  θ: 'TH',
  ð: 'TH',
  t: 'DD',
  d: 'DD',
  ɾ: 'DD',
  k: 'kk',
  g: 'kk',
  ɡ: 'kk',
  ŋ: 'kk',
  x: 'kk',
  χ: 'kk',
  h: 'kk',
  ɣ: 'kk',
  ʃ: 'CH',
  ʒ: 'CH',
  ɕ: 'CH',
  ʑ: 'CH',
  ʂ: 'CH',
  ʐ: 'CH',
  s: 'SS',
  z: 'SS',
  n: 'nn',
  l: 'nn',
  ɲ: 'nn',
  ɫ: 'nn',
  ɹ: 'RR',
  r: 'RR',
  ɻ: 'RR',
  ɚ: 'RR',
  ɝ: 'RR',
  a: 'aa',
  ɑ: 'aa',
  æ: 'aa',
  ʌ: 'aa',
  ɐ: 'aa',
  ɒ: 'aa',
  e: 'E',
  ɛ: 'E',
  ə: 'E',
  ɜ: 'E',
  ɘ: 'E',
  i: 'ih',
  ɪ: 'ih',
  ɨ: 'ih',
  j: 'ih',
  o: 'oh',
  ɔ: 'oh',
  ɤ: 'oh',
  u: 'ou',
  ʊ: 'ou',
  ɯ: 'ou',
  w: 'ou',
  y: 'ou',
  ɥ: 'ou',
  ʔ: 'sil',
}

const LONGEST_KEY = Math.max(...Object.keys(PHONEME_VISEMES).map((key) => key.length))
/** Stress, length, espeak's tone-less `-`, and combining diacritics. */
const IGNORED = /[ˈˌːˑ-]|\p{M}/gu

/** The shapes one phoneme goes through, in order (a pause, or a name with no known symbol, is `sil`). */
export function visemesOfPhoneme(name: string): Viseme[] {
  const symbols = name.normalize('NFD').replace(IGNORED, '')
  const shapes: Viseme[] = []
  let index = 0
  while (index < symbols.length) {
    let length = Math.min(LONGEST_KEY, symbols.length - index)
    while (length > 0 && PHONEME_VISEMES[symbols.slice(index, index + length)] === undefined) length--
    if (length === 0) {
      // A symbol this table does not know shows no shape of its own.
      index++
      continue
    }
    const shape = PHONEME_VISEMES[symbols.slice(index, index + length)]
    if (shapes.at(-1) !== shape) shapes.push(shape)
    index += length
  }
  return shapes.length > 0 ? shapes : ['sil']
}

/**
 * The viseme timeline of an audio from its synthesiser's phoneme timing: each phoneme lasts
 * until the next one starts, is shared evenly between the shapes it goes through, and equal
 * neighbours merge. Before the first phoneme the mouth rests (`sil`), as it does in espeak's
 * pauses (its last phoneme is one); the spans are contiguous, in whole milliseconds, and end at the audio's duration.
 */
export function visemeTimeline(timing: SpeechTiming): VisemeSpan[] {
  const durationMs = Math.max(0, timing.durationMs)
  const marks = timing.phonemes
    .filter((mark) => Number.isFinite(mark.startMs))
    .map((mark) => ({ ...mark, startMs: Math.min(Math.max(0, mark.startMs), durationMs) }))
    .sort((a, b) => a.startMs - b.startMs)
  const points: Array<{ viseme: Viseme; at: number }> = [{ viseme: 'sil', at: 0 }]
  marks.forEach((mark, index) => {
    const end = index + 1 < marks.length ? marks[index + 1].startMs : durationMs
    const shapes = visemesOfPhoneme(mark.phoneme)
    const share = (end - mark.startMs) / shapes.length
    shapes.forEach((viseme, part) => points.push({ viseme, at: mark.startMs + share * part }))
  })
  const spans: VisemeSpan[] = []
  points.forEach((point, index) => {
    const start = Math.round(point.at)
    const end = Math.round(index + 1 < points.length ? points[index + 1].at : durationMs)
    if (end <= start) return
    const last = spans.at(-1)
    if (last && last.viseme === point.viseme) last.end_ms = end
    else spans.push({ viseme: point.viseme, start_ms: last ? last.end_ms : start, end_ms: end })
  })
  return spans
}
