import { installErrorHandling } from '../../core/errors/error-handler.ts'
import { installOpenCors } from '../../core/http/open-cors.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import { packageInfo } from '../../core/version.ts'
import type { AvatarConfig } from './config.ts'
import { avatarCors } from './cors.ts'
import { formatAvatarError } from './errors.ts'
import { createAvatarMetrics } from './metrics.ts'
import { migrations } from './migrations/index.ts'
import { type ConversationProviders, createConversation, llmFromConfig } from './modules/chat/index.ts'
import { createHealthService, healthRoutes } from './modules/health/index.ts'
import { createTtsProvider, type SpeechProviders, speechPlugin } from './modules/speech/index.ts'
import { createAsrProvider, transcriptionPlugin } from './modules/transcription/index.ts'
import { pageRoutes } from './modules/page/index.ts'

/** The longest a start waits for the speech threads to warm (below the server's pluginTimeout, 45 s). */
const WARM_WAIT_MS = 30_000

export const avatarService: ServiceDefinition<AvatarConfig, SpeechProviders & ConversationProviders> = {
  name: 'avatar',
  migrations,
  paths: ['/v1', '/health', '/ws', '/avatar'],
  errorBody: formatAvatarError,
  // Served alone, the avatar owns the whole server: `/ws-x` or `/anything` answer `{detail}` too.
  unclaimedErrorBody: formatAvatarError,
  plugin: (deps) => async (app) => {
    const { config, clock } = deps
    // The providers are shared by their routes and the health report, which tells their state.
    const llm = deps.llm ?? llmFromConfig(config.chat)
    const tts = deps.tts ?? createTtsProvider(config.speech, clock)
    // A provider we created is ours to close (its worker threads); an injected one is not.
    if (!deps.tts) app.addHook('onClose', () => tts.close())
    // Warm engines before the first request (AVATAR_TTS_WARM): `triad serve` takes the port only
    // once this settles, its port holder answering `/readyz` 503 `services starting` meanwhile.
    // An engine that cannot load leaves the rest of the avatar serving; synthesis then fails.
    // A machine so loaded that warming outlasts WARM_WAIT_MS serves meanwhile: its first
    // syntheses wait for the warm-up to end.
    app.addHook('onReady', async function warmSpeech() {
      if (!tts.ready) return
      const started = performance.now()
      const warming = tts.ready().then(
        () => app.log.info({ provider: tts.name, ms: Math.round(performance.now() - started) }, 'speech synthesis warm'),
        (error: unknown) => app.log.error({ err: error }, 'speech synthesis could not start; speech routes will fail until it can'),
      )
      let waited: NodeJS.Timeout | undefined
      const bound = new Promise<void>((resolve) => {
        waited = setTimeout(() => {
          app.log.warn({ ms: WARM_WAIT_MS }, 'speech synthesis still warming; serving meanwhile')
          resolve()
        }, WARM_WAIT_MS)
      })
      await Promise.race([warming, bound])
      clearTimeout(waited)
    })
    const asr = deps.asr ?? createAsrProvider(config.transcription)
    const cors = avatarCors(config.corsOrigins)
    const metrics = createAvatarMetrics(deps.metrics, { ttsQueued: tts.queued ? () => tts.queued?.() ?? 0 : undefined })
    const conversation = createConversation({ ...deps, llm, config: config.chat, log: app.log, metrics, speech: { asr, tts, preemptive: config.transcription.preemptive } })
    app.addHook('onClose', () => conversation.close())

    await app.register(
      async (scope) => {
        // The avatar API's errors are always `{detail: string}`.
        installErrorHandling(scope, formatAvatarError)
        installOpenCors(scope, { ...cors, preflightPaths: ['/*'] })
        await scope.register(conversation.routes)
        await scope.register(speechPlugin({ config: config.speech, database: deps.database, ids: deps.ids, tts, clock, metrics }))
        await scope.register(transcriptionPlugin({ config: config.transcription, asr, metrics }))
      },
      { prefix: '/v1' },
    )
    await app.register(async (scope) => {
      installErrorHandling(scope, formatAvatarError, { notFound: false })
      installOpenCors(scope, { ...cors, preflightPaths: ['/health'] })
      const health = createHealthService({ clock, version: packageInfo.version, hasModel: llm !== undefined, tts, asr })
      await scope.register(healthRoutes, { service: health })
    })
    await app.register(async (scope) => {
      installErrorHandling(scope, formatAvatarError, { notFound: false })
      await scope.register(conversation.socketRoutes)
      await scope.register(pageRoutes)
    })
  },
}
