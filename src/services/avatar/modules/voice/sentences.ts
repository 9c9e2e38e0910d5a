// A sentence ends at . ! ? … followed by white space (so "3.14" and "e.g.x" do not), at a
// Chinese or full-width end mark at once, or at a line break. Closing quotes and brackets
// after the mark stay with the sentence.
const END = /(?:[.!?…]+["'”’)\]]*(?=\s)|[。！？；]+["'”’」』）]*|\n+)/gu

/**
 * Cuts streamed text into sentences as they complete, so that speech can start at the first
 * sentence end of a reply while the model is still writing the rest.
 */
export class SentenceSplitter {
  private pending = ''

  /** Adds text; returns the sentences it completed (trimmed, never empty). */
  push(text: string): string[] {
    this.pending += text
    const sentences: string[] = []
    let start = 0
    END.lastIndex = 0
    for (let match = END.exec(this.pending); match; match = END.exec(this.pending)) {
      const end = match.index + match[0].length
      const sentence = this.pending.slice(start, end).trim()
      if (sentence) sentences.push(sentence)
      start = end
    }
    this.pending = this.pending.slice(start)
    return sentences
  }

  /** The rest, at the end of the stream (a last sentence without its end mark). */
  end(): string[] {
    const rest = this.pending.trim()
    this.pending = ''
    return rest ? [rest] : []
  }
}
