import type { ActorColumns } from './tables.ts'

/**
 * Who did something through the merchant API (issue 30): an app with its key, or a merchant
 * user signed in to the dashboard. Recorded on trail entries and events; absent where nobody
 * of the merchant acted (a customer's payment, the acquirer's dispute).
 */
export type Actor = { type: 'app'; id: string } | { type: 'user'; id: string; email: string }

/** The actor as its three nullable columns (payments_trail, payments_events). */
export function actorColumns(actor: Actor | undefined): ActorColumns {
  if (!actor) return { actor_type: null, actor_id: null, actor_email: null }
  return { actor_type: actor.type, actor_id: actor.id, actor_email: actor.type === 'user' ? actor.email : null }
}

/** The actor of a row's three columns, or undefined when the row names none. */
export function actorOf(row: ActorColumns): Actor | undefined {
  if (row.actor_id === null) return undefined
  if (row.actor_type === 'user') return { type: 'user', id: row.actor_id, email: row.actor_email ?? '' }
  if (row.actor_type === 'app') return { type: 'app', id: row.actor_id }
  return undefined
}

/** `{actor}` for a row that names one, else nothing: spread into a response object. */
export function actorField(row: ActorColumns): { actor?: Actor } {
  const actor = actorOf(row)
  return actor ? { actor } : {}
}
