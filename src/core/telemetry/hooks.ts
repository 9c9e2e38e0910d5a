import type { Database } from '../db/create-db.ts'

/**
 * What tracing adds to the app when it runs, set by `startTracing` before the app is built.
 * Empty when tracing is off, so the core imports nothing of OpenTelemetry and pays nothing.
 */
export const telemetryHooks: {
  /** The ids of the active span, merged into every log line. */
  logIds?: () => Record<string, string>
  /** Called with the app's database: SQLite has no instrumentation, so tracing adds spans for its statements. */
  observeDatabase?: (database: Database) => void
  /** Sends the spans not exported yet (the app calls it when it closes). */
  flush?: () => Promise<void>
} = {}
