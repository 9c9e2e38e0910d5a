export { createEdgeProvider } from './edge.tts.ts'
export { createEspeakProvider } from './espeak.tts.ts'
export { AUDIO_FORMATS, type AudioFormat, CONTENT_TYPES, type SpeechTiming, SynthesisError, type SynthesisStream, type TtsProvider } from './tts.port.ts'
export { defaultVoiceFor, findVoice, VOICES } from './voices.ts'
