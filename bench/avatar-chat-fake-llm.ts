// A fake OpenAI-compatible model in its own process, for bench/avatar-chat.ts. Prints its base
// URL, then serves until SIGTERM. Usage: node bench/avatar-chat-fake-llm.ts <pieces> <delayMs>
import { startFakeOpenAi } from '../test/services/avatar/fake-openai-server.ts'

const pieces = Number(process.argv[2] ?? 20)
const delayMs = Number(process.argv[3] ?? 5)
const server = await startFakeOpenAi({
  // The first piece carries the markers and the first word, so the first chunk is also the
  // first visible token on both paths being compared.
  pieces: Array.from({ length: pieces }, (_, i) => (i === 0 ? '[emotion:happy][action:speak] word0' : ` word${i}`)),
  delayMs,
})
process.stdout.write(`${server.baseUrl}\n`)
process.on('SIGTERM', () => server.close().then(() => process.exit(0)))
