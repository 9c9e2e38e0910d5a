export { createVoiceSession, type VoiceChat, type VoiceDeps, type VoiceEvent, type VoiceSession } from './voice.session.ts'
