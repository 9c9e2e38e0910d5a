import multipart from '@fastify/multipart'
import type { FastifyPluginAsync } from 'fastify'
import type { TranscriptionConfig } from '../../config.ts'
import type { AvatarMetrics } from '../../metrics.ts'
import { type AsrProvider, createNoAsrProvider, createOpenAiAsrProvider, createPocketsphinxProvider, pocketsphinxInstalled } from '../../providers/asr/index.ts'
import { installSpeechErrorHandling } from '../speech/index.ts'
import { transcriptionRoutes } from './transcription.routes.ts'
import { createTranscriptionService, MAX_UPLOAD_BYTES } from './transcription.service.ts'

/**
 * The recognizer the configuration and the machine allow: the OpenAI-compatible API when a
 * key is set, else local pocketsphinx when it is installed, else none (which says what to set).
 */
export function createAsrProvider(config: TranscriptionConfig): AsrProvider {
  const { openai, pocketsphinx, provider, timeoutMs } = config
  const wantsOpenAi = provider === 'openai' || (provider === 'auto' && openai.apiKey)
  if (wantsOpenAi) {
    if (!openai.apiKey) return createNoAsrProvider('AVATAR_ASR_PROVIDER is openai but AVATAR_ASR_API_KEY is not set')
    return createOpenAiAsrProvider({ apiKey: openai.apiKey, baseUrl: openai.baseUrl, model: openai.model, timeoutMs })
  }
  if (provider === 'pocketsphinx' || provider === 'auto') {
    if (pocketsphinxInstalled(pocketsphinx)) return createPocketsphinxProvider({ ...pocketsphinx, timeoutMs })
    if (provider === 'pocketsphinx') {
      return createNoAsrProvider(
        `AVATAR_ASR_PROVIDER is pocketsphinx but ${pocketsphinx.command} or its model in ${pocketsphinx.modelDir} is missing: install the pocketsphinx and pocketsphinx-en-us packages`,
      )
    }
  }
  return createNoAsrProvider()
}

/** Mounts POST /asr and GET /asr/status (under the service's /v1 scope). */
export function transcriptionPlugin(deps: { config: TranscriptionConfig; asr?: AsrProvider; metrics?: AvatarMetrics }): FastifyPluginAsync {
  return async (app) => {
    installSpeechErrorHandling(app)
    // Registered here, not globally: only this scope takes multipart bodies.
    await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES } })
    const provider = deps.asr ?? createAsrProvider(deps.config)
    await app.register(transcriptionRoutes, { service: createTranscriptionService({ provider, metrics: deps.metrics }) })
  }
}
