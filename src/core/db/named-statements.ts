import { AsyncLocalStorage } from 'node:async_hooks'
import { LRUCache } from 'lru-cache'

/**
 * Which statements go to PostgreSQL as named prepared statements, parsed and planned once per
 * connection instead of on every call (issue 36: planning alone cost more than running the hot
 * reads). core/db/pg-pool.ts asks `nameFor` before each statement; nothing else knows of names.
 *
 * Only a statement worth a plan gets a name: one SELECT, INSERT, UPDATE, DELETE or WITH (never
 * transaction control, SET, DDL or a text holding several statements), outside migrations, whose
 * text this process has already run `REPEATS_BEFORE_NAMING - 1` times (a statement built once,
 * or an IN list of a length never seen again, stays unnamed). Each connection keeps at most
 * `maxPerConnection` names; past that the least recently used is closed on the server (the
 * protocol's Close message, sent in front of the next statement: no round trip of its own).
 */

/** A single statement that PostgreSQL can prepare and that is worth a cached plan. */
const NAMEABLE = /^\s*(select|insert|update|delete|with)\b/i
/** Texts remembered for counting; one that falls out only costs a later second sighting. */
const REMEMBERED_TEXTS = 2000
const REPEATS_BEFORE_NAMING = 2
export const DEFAULT_MAX_PER_CONNECTION = 100

/** The name a text has in this process (names are never reused for another text), and its sightings. */
const texts = new LRUCache<string, { seen: number; name?: string }>({ max: REMEMBERED_TEXTS })
let namesGiven = 0

const unnamed = new AsyncLocalStorage<true>()

/** Runs `work` with every statement it starts sent unnamed (migrations: DDL changes what a plan would return). */
export function withoutNamedStatements<T>(work: () => Promise<T>): Promise<T> {
  return unnamed.run(true, work)
}

/** The process-wide name of `text`, once it has been seen often enough; undefined while it stays unnamed. */
function processNameOf(text: string): string | undefined {
  const known = texts.get(text)
  if (known?.name) return known.name
  if (!NAMEABLE.test(text) || text.includes(';') || unnamed.getStore()) return undefined
  const seen = (known?.seen ?? 0) + 1
  if (seen < REPEATS_BEFORE_NAMING) {
    texts.set(text, { seen })
    return undefined
  }
  const name = `triad_${(namesGiven++).toString(36)}`
  texts.set(text, { seen, name })
  return name
}

/** node-postgres's record of what it has parsed on a connection, and its protocol writer (pg 8's Connection). */
export interface ParsedStatementsOwner {
  connection: {
    parsedStatements: Record<string, string>
    close(message: { type: 'S'; name: string }): void
  }
}

/**
 * One connection's names, least recently used first. Closing a name must happen while no
 * statement is in flight on the connection: one already sent might be using it.
 */
export function connectionStatements(client: ParsedStatementsOwner, maxPerConnection: number) {
  const names = new Map<string, string>()
  const { connection } = client
  const forget = (name: string) => {
    names.delete(name)
    // node-postgres parses a name again once it no longer records it.
    delete connection.parsedStatements[name]
    connection.close({ type: 'S', name })
  }
  return {
    /** The name to send `text` under now, or undefined to send it unnamed. */
    nameFor(text: string, idle: boolean): string | undefined {
      const name = processNameOf(text)
      if (name === undefined) return undefined
      if (names.delete(name)) {
        names.set(name, text)
        return name
      }
      if (names.size >= maxPerConnection) {
        if (!idle) return undefined
        const oldest = names.keys().next().value as string
        forget(oldest)
      }
      names.set(name, text)
      return name
    },
    /**
     * After PostgreSQL refused a named statement's plan (a table it reads changed shape): the
     * name is closed, so that its next use parses the text again. A statement in flight under
     * the same name would meet the same refusal, so closing it under them loses nothing.
     */
    forget(name: string): void {
      if (names.has(name)) forget(name)
    },
    get size() {
      return names.size
    },
  }
}
