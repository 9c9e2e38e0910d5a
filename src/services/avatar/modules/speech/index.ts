import type { FastifyPluginAsync } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { SpeechConfig } from '../../config.ts'
import type { AvatarMetrics } from '../../metrics.ts'
import type { AsrProvider } from '../../providers/asr/index.ts'
import { createEdgeProvider, createEspeakProvider, type TtsProvider } from '../../providers/tts/index.ts'
import { installSpeechErrorHandling } from './errors.ts'
import { createSpeechRepository } from './speech.repository.ts'
import { speechRoutes } from './speech.routes.ts'
import { createSpeechService } from './speech.service.ts'

export { installSpeechErrorHandling } from './errors.ts'

/** The speech providers tests may replace with fakes. */
export interface SpeechProviders {
  tts: TtsProvider
  asr: AsrProvider
}

/** The provider the configuration asks for; the online one keeps a local one to fall back on. */
export function createTtsProvider(config: SpeechConfig, clock?: Clock): TtsProvider {
  const local = createEspeakProvider({ threads: config.threads, warm: config.warm })
  if (config.provider === 'edge') return createEdgeProvider({ ...config.edge, fallback: local, clock })
  return local
}

export { VISEMES, type VisemeSpan, visemesOfPhoneme, visemeTimeline } from './visemes.ts'

/** Mounts POST /tts, GET /tts/{id}/visemes and GET /tts/voices (under the service's /v1 scope). */
export function speechPlugin(deps: { config: SpeechConfig; database: Database; clock: Clock; ids: IdGenerator; tts?: TtsProvider; metrics?: AvatarMetrics }): FastifyPluginAsync {
  return async (app) => {
    installSpeechErrorHandling(app)
    const provider = deps.tts ?? createTtsProvider(deps.config, deps.clock)
    // A provider we created is ours to close (its worker threads); an injected one is not.
    if (!deps.tts) app.addHook('onClose', () => provider.close())
    const service = createSpeechService({
      provider,
      repository: createSpeechRepository(deps.database),
      clock: deps.clock,
      ids: deps.ids,
      timelineTtlMs: deps.config.timelineTtlMs,
      metrics: deps.metrics,
      onSweepError: (error) => app.log.warn({ err: error }, 'could not delete expired viseme timelines'),
    })
    await app.register(speechRoutes, { service })
  }
}
