import type { Database } from '../../../../core/db/create-db.ts'
import type { NewTimeline, SpeechDb, TimelineRow } from './speech.table.ts'

/** The stored viseme timelines of recent syntheses. */
export function createSpeechRepository(database: Database) {
  const db = database.db as SpeechDb
  return {
    async insert(row: NewTimeline): Promise<void> {
      await db.insertInto('avatar_tts_timelines').values(row).execute()
    },
    /** The timeline of a synthesis, unless it expired before `now`. */
    async find(id: string, now: string): Promise<TimelineRow | undefined> {
      return db
        .selectFrom('avatar_tts_timelines')
        .select(['id', 'provider', 'duration_ms', 'visemes', 'created_at', 'expires_at'])
        .where('id', '=', id)
        .where('expires_at', '>', now)
        .executeTakeFirst()
    },
    /** Deletes the timelines that expired before `now`. */
    async deleteExpired(now: string): Promise<void> {
      await db.deleteFrom('avatar_tts_timelines').where('expires_at', '<=', now).execute()
    },
  }
}

export type SpeechRepository = ReturnType<typeof createSpeechRepository>
