import type { Clock } from '../../../../core/clock.ts'
import type { AsrProvider } from '../../providers/asr/index.ts'
import type { TtsProvider } from '../../providers/tts/index.ts'
import type { Health } from './health.schemas.ts'

export interface HealthServiceDeps {
  clock: Clock
  version: string
  /** Whether a language model is configured (without one, replies come from the mock). */
  hasModel: boolean
  tts: TtsProvider
  asr: AsrProvider
}

/** How long a synthesis provider's status is reused before it is asked again (in the background). */
const TTS_STATUS_MAX_AGE_MS = 60_000

/**
 * The report front ends poll (every 30 s per open page, in the meta-human one): cheap, so no
 * database and no network on the request's path. The online TTS provider's status may open a
 * connection, so it is asked once, then refreshed behind the answers when it is older than
 * TTS_STATUS_MAX_AGE_MS.
 */
export function createHealthService(deps: HealthServiceDeps) {
  const { clock } = deps
  const startedAt = clock.now().getTime()
  let tts: { available: boolean; at: number } | undefined
  let refreshing: Promise<boolean> | undefined

  function refreshTts(): Promise<boolean> {
    refreshing ??= deps.tts
      .status()
      .then(
        (status) => status.available,
        () => false,
      )
      .then((available) => {
        tts = { available, at: clock.now().getTime() }
        refreshing = undefined
        return available
      })
    return refreshing
  }

  async function ttsAvailable(): Promise<boolean> {
    if (!tts) return refreshTts()
    if (clock.now().getTime() - tts.at >= TTS_STATUS_MAX_AGE_MS) void refreshTts()
    return tts.available
  }

  return {
    async report(): Promise<Health> {
      const uptimeMs = Math.max(0, clock.now().getTime() - startedAt)
      return {
        status: 'ok',
        uptime_seconds: Math.round(uptimeMs / 10) / 100,
        version: deps.version,
        services: {
          chat: 'available',
          llm: deps.hasModel ? 'available' : 'mock_mode',
          tts: (await ttsAvailable()) ? 'available' : 'unavailable',
          asr: deps.asr.status().available ? 'available' : 'unavailable',
        },
      }
    },
  }
}

export type HealthService = ReturnType<typeof createHealthService>
