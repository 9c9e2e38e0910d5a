import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { completionPieces } from '../../../src/services/avatar/providers/llm/llm.openai.ts'

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`

async function collect(body: string | string[]) {
  const parts = typeof body === 'string' ? [body] : body
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(new TextEncoder().encode(part))
      controller.close()
    },
  })
  const pieces: string[] = []
  for await (const piece of completionPieces(new Response(stream))) pieces.push(piece)
  return pieces
}

describe('chat-completions event-stream parsing', () => {
  it('reads content pieces until [DONE], across arbitrary chunk boundaries and CRLF', async () => {
    const text = `${chunk('Hel')}: keep-alive comment\n\n${chunk('lo')}data: {"choices":[{"delta":{}}]}\r\n\r\ndata: [DONE]\n\n${chunk('ignored')}`
    assert.deepEqual(await collect(text), ['Hel', 'lo'])
    assert.deepEqual(await collect([...text]), ['Hel', 'lo'])
  })

  it('treats an error chunk as a failure and refuses JSON it cannot read', async () => {
    await assert.rejects(collect(`${chunk('a')}data: {"error":{"message":"overloaded"}}\n\n`), /overloaded/)
    await assert.rejects(collect('data: {not json\n\n'), SyntaxError)
  })
})
