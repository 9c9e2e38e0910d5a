/**
 * `text` cut to at most `max` UTF-16 units, never between the two halves of a surrogate pair:
 * a plain `slice` can leave half an emoji, which no UTF-8 encoder (nor `encodeURIComponent`)
 * takes.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}
