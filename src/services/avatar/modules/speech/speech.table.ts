import type { Insertable, Kysely, Selectable } from 'kysely'

interface TimelinesTable {
  /** The synthesis id (`syn_…`), sent with its audio. */
  id: string
  /** The provider that really spoke (after any fallback). */
  provider: string
  /** Null when the provider reported no timing. */
  duration_ms: number | null
  /** JSON array of `{viseme, start_ms, end_ms}`; null when the provider reported no phonemes. */
  visemes: string | null
  created_at: string
  expires_at: string
}

interface SpeechTables {
  avatar_tts_timelines: TimelinesTable
}

export type TimelineRow = Selectable<TimelinesTable>
export type NewTimeline = Insertable<TimelinesTable>
export type SpeechDb = Kysely<SpeechTables>
