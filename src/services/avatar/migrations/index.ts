import type { MigrationSet } from '../../../core/db/migrator.ts'
import * as createChatSessions from './202611220035_create_chat_sessions.ts'
import * as indexSessionsListing from './202611251500_index_sessions_listing.ts'
import * as createTtsTimelines from './202611251900_create_tts_timelines.ts'

/** Every migration of this service, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: MigrationSet = {
  '202611220035_create_chat_sessions': createChatSessions,
  '202611251500_index_sessions_listing': indexSessionsListing,
  '202611251900_create_tts_timelines': createTtsTimelines,
}
