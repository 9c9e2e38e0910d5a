import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { backup, DatabaseSync } from 'node:sqlite'
import { parsePostgresUrl } from './postgres-url.ts'

/**
 * Backups of the SQLite database (`triad backup`, `triad restore`), and the PostgreSQL commands
 * to use instead. Knows files and databases, not services: a Triad database is one that holds
 * at least one `<service>_migrations` history table.
 */

/**
 * Pages copied per step of SQLite's backup (4 MB of 4 kB pages): between steps the progress is
 * reported. The copy is still of one instant: `copyDatabase` holds one read transaction on the
 * source across the steps, so writers (WAL) neither show through nor restart it.
 */
const PAGES_PER_STEP = 1024

/** Pages copied so far and the pages of the whole database, after each step of a copy. */
export type PageProgress = (copied: number, total: number) => void

export interface SqliteBackupResult {
  /** Absolute path of the backup written. */
  path: string
  bytes: number
  /** The services whose history the backup holds (from `<service>_migrations`). */
  services: string[]
  /** Pages copied, rows and tables in the copy: what the summary line counts. */
  pages: number
  rows: number
  tables: number
}

interface SealedCopy {
  services: string[]
  rows: number
  tables: number
}

/** The file of a `sqlite:<path>` URL; undefined for PostgreSQL and `sqlite::memory:`. */
export function sqlitePathOf(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined
  const path = databaseUrl.slice('sqlite:'.length)
  return path === ':memory:' ? undefined : resolve(path)
}

function temporaryBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.partial`)
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {}
}

/**
 * Checks that `path` is a whole SQLite database Triad wrote: `quick_check` passes and at least
 * one service's migration history is in it. Leaves it as a single file (rollback journal, not
 * WAL), so it can be copied, checksummed and moved without a `-wal` beside it.
 */
function sealBackup(path: string): SealedCopy {
  const db = new DatabaseSync(path)
  try {
    db.exec('pragma journal_mode = delete')
    const check = db.prepare('pragma quick_check').all() as Array<{ quick_check: string }>
    if (check.length !== 1 || check[0]?.quick_check !== 'ok') throw new Error(`${path} failed SQLite's quick_check: ${check.map((row) => row.quick_check).join('; ')}`)
    const histories = db.prepare("select name from sqlite_master where type = 'table' and name like '%\\_migrations' escape '\\' order by name").all() as Array<{ name: string }>
    const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\'").all() as Array<{ name: string }>
    let rows = 0
    for (const { name } of tables) rows += Number((db.prepare(`select count(*) as n from "${name.replaceAll('"', '""')}"`).get() as { n: number }).n)
    return { services: histories.map((row) => row.name.slice(0, -'_migrations'.length)), rows, tables: tables.length }
  } finally {
    db.close()
  }
}

/**
 * Copies the database open as `db` to `destination` in steps of PAGES_PER_STEP, reporting each.
 * One read transaction is held on `db` for the whole copy: SQLite's backup uses the source
 * connection's open transaction rather than one per step, so the copy is the database as it was
 * when the transaction began, however long the copy takes. Answers the pages copied.
 */
async function copyDatabase(db: DatabaseSync, destination: string, onProgress: PageProgress | undefined): Promise<number> {
  db.exec('begin')
  try {
    // The snapshot is taken by the first read, not by `begin`.
    db.prepare('select count(*) from sqlite_master').get()
    // SQLite reports after each step but the last: the end is reported here.
    const pages = await backup(db, destination, { rate: PAGES_PER_STEP, progress: ({ totalPages, remainingPages }) => onProgress?.(totalPages - remainingPages, totalPages) })
    onProgress?.(pages, pages)
    return pages
  } finally {
    db.exec('commit')
  }
}

/**
 * Copies the live database at `source` to `destination` with SQLite's online backup API: one
 * read transaction, so the copy is the database as it was at one instant, every transaction
 * committed before that instant in it and none after, while the servers keep writing (WAL
 * readers do not block writers). Written beside the destination and renamed over it at the end,
 * so a failed backup leaves no half file under the final name.
 */
export async function backupSqlite(source: string, destination: string, options: { overwrite?: boolean; onProgress?: PageProgress } = {}): Promise<SqliteBackupResult> {
  const target = resolve(destination)
  if (!existsSync(source)) throw new Error(`there is no database at ${source}`)
  if (!options.overwrite && existsSync(target)) throw new Error(`${target} exists; pass --force to replace it`)
  mkdirSync(dirname(target), { recursive: true })
  const partial = temporaryBeside(target)
  // The busy timeout lets the backup wait while a writer checkpoints; it never waits on a plain write.
  const db = new DatabaseSync(source, { readOnly: true, timeout: 10_000 })
  try {
    const pages = await copyDatabase(db, partial, options.onProgress)
    const copy = sealBackup(partial)
    if (copy.services.length === 0) throw new Error(`${source} holds no Triad data (no *_migrations table)`)
    renameSync(partial, target)
    return { path: target, bytes: statSync(target).size, pages, ...copy }
  } catch (error) {
    removeQuietly(partial)
    throw error
  } finally {
    db.close()
  }
}

/**
 * True when another connection (a running Triad, a `sqlite3` shell) has the database open: a
 * connection in WAL mode holds a shared lock for as long as it is open, so an exclusive lock
 * is refused at once.
 */
function sqliteInUse(path: string): boolean {
  if (!existsSync(path)) return false
  const db = new DatabaseSync(path, { timeout: 0 })
  try {
    db.exec('pragma locking_mode = exclusive')
    db.exec('begin exclusive')
    db.exec('commit')
    return false
  } catch (error) {
    if ((error as { errcode?: number }).errcode === 5 || /locked|busy/i.test((error as Error).message)) return true
    throw error
  } finally {
    db.close()
  }
}

export interface SqliteRestoreResult extends SqliteBackupResult {
  /** True when a database was there before and was replaced (--force). */
  replaced: boolean
}

/**
 * Puts the backup at `source` in place as the database at `target`. Refuses a target that a
 * process has open, and one that holds data unless `overwrite`. The backup is checked first
 * (it must be a whole Triad database), copied beside the target, and renamed over it, after the
 * old database's `-wal` and `-shm` are removed (they belong to the old file).
 */
export async function restoreSqlite(source: string, target: string, options: { overwrite?: boolean; onProgress?: PageProgress } = {}): Promise<SqliteRestoreResult> {
  const from = resolve(source)
  if (!existsSync(from)) throw new Error(`there is no backup at ${from}`)
  if (sqliteInUse(target)) throw new Error(`the database ${target} is in use (a Triad server or another program has it open): stop every instance first`)
  const occupied = existsSync(target) && statSync(target).size > 0
  if (occupied && !options.overwrite) throw new Error(`${target} already holds a database; pass --force to replace it (stop every instance first)`)
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  const partial = temporaryBeside(target)
  const db = new DatabaseSync(from, { readOnly: true })
  try {
    const pages = await copyDatabase(db, partial, options.onProgress)
    const copy = sealBackup(partial)
    if (copy.services.length === 0) throw new Error(`${from} is not a Triad backup (no *_migrations table)`)
    for (const suffix of ['-wal', '-shm', '-journal']) removeQuietly(`${target}${suffix}`)
    renameSync(partial, target)
    return { path: target, bytes: statSync(target).size, pages, ...copy, replaced: occupied }
  } catch (error) {
    removeQuietly(partial)
    throw error
  } finally {
    db.close()
  }
}

/** Single-quotes a word for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

/** The PostgreSQL URL without its password (pg_dump and pg_restore read PGPASSWORD or ~/.pgpass). */
export function withoutPassword(databaseUrl: string): { url: string; hadPassword: boolean } {
  return parsePostgresUrl(databaseUrl).withoutPassword()
}

/** The `pg_dump` command that backs up the database of `databaseUrl` into `file` (custom format). */
export function pgDumpCommand(databaseUrl: string, file: string): string {
  const { url } = withoutPassword(databaseUrl)
  return ['pg_dump', '--format=custom', '--no-owner', '--no-privileges', `--file=${shellQuote(file)}`, `--dbname=${shellQuote(url)}`].join(' ')
}

/** The `pg_restore` command that puts the dump `file` back into the database of `databaseUrl`. */
export function pgRestoreCommand(databaseUrl: string, file: string): string {
  const { url } = withoutPassword(databaseUrl)
  return [
    'pg_restore',
    '--clean',
    '--if-exists',
    '--no-owner',
    '--no-privileges',
    '--single-transaction',
    '--exit-on-error',
    `--dbname=${shellQuote(url)}`,
    shellQuote(file),
  ].join(' ')
}
