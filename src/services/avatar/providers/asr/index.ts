export { type AsrProvider, type RecognitionStatus, TranscriptionError } from './asr.port.ts'
export { createNoAsrProvider } from './none.asr.ts'
export { createOpenAiAsrProvider } from './openai.asr.ts'
export { createPocketsphinxProvider, pocketsphinxInstalled } from './pocketsphinx.asr.ts'
