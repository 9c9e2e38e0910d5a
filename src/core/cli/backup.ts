import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { CoreConfig } from '../config/core-config.ts'
import { backupSqlite, pgDumpCommand, pgRestoreCommand, restoreSqlite, sqlitePathOf, withoutPassword } from '../db/backup.ts'
import { openSecretsFile, type SecretsDocument, type StoredKey } from '../security/secrets-file.ts'
import { type CliOutput, type Command, CommandError } from './command.ts'
import { startProgress } from './progress.ts'

/**
 * `triad backup` and `triad restore`. The database and the secrets stay apart, as "Secrets apart
 * from data" decided: the backup file holds the database only; `--secrets FILE` copies the
 * secrets file to a second file the operator keeps elsewhere, and `restore --secrets FILE` puts
 * it back (merged with any keys already there), so tokens and sealed cards verify again.
 */

const secretsOption = { secrets: { type: 'string' }, force: { type: 'boolean' } } as const

function commandFailed(error: unknown): never {
  throw new CommandError(error instanceof Error ? error.message : String(error))
}

/** Progress of a page copy on the standard error (progress.ts), and its summary line once done. */
function pageProgress(output: CliOutput, label: string) {
  const progress = startProgress(output, { label, unit: 'pages', total: 0 })
  return {
    onProgress: (copied: number, total: number) => progress.update(copied, total),
    finish: (copy: { pages: number; bytes: number; rows: number; tables: number }) =>
      progress.finish(`${copy.pages.toLocaleString('en-US')} pages (${copy.bytes.toLocaleString('en-US')} bytes), ${copy.rows.toLocaleString('en-US')} rows in ${copy.tables} tables`),
  }
}

function countKeys(document: SecretsDocument): number {
  return Object.values(document.secrets).reduce((sum, keys) => sum + keys.length, 0)
}

/** Every key of both documents, each once (by id), oldest first within a secret. */
function mergeSecrets(current: SecretsDocument, restored: SecretsDocument): SecretsDocument {
  const secrets: Record<string, StoredKey[]> = {}
  for (const name of new Set([...Object.keys(current.secrets), ...Object.keys(restored.secrets)])) {
    const byId = new Map<string, StoredKey>()
    for (const key of [...(restored.secrets[name] ?? []), ...(current.secrets[name] ?? [])]) if (!byId.has(key.id)) byId.set(key.id, key)
    secrets[name] = [...byId.values()].sort((a, b) => a.created.localeCompare(b.created))
  }
  return { secrets }
}

function postgresNote(core: CoreConfig): string {
  return withoutPassword(core.databaseUrl).hadPassword
    ? '# The password of DATABASE_URL is left out: give it in PGPASSWORD or ~/.pgpass.'
    : '# Credentials as for psql (PGPASSWORD, ~/.pgpass or the URL above).'
}

export function backupCommand(getCore: () => CoreConfig): Command {
  return {
    name: 'backup',
    summary: 'Back up the database to FILE while Triad serves (SQLite), or print the pg_dump command (PostgreSQL).',
    usage: '<file> [--secrets FILE] [--force]',
    options: secretsOption,
    positionals: 1,
    run: async (args, output) => {
      const core = getCore()
      const [file = ''] = args.positionals
      const secretsTarget = typeof args.values.secrets === 'string' ? resolve(args.values.secrets) : undefined
      const force = args.values.force === true
      const sqlite = sqlitePathOf(core.databaseUrl)
      if (core.databaseUrl.startsWith('sqlite::memory:')) throw new CommandError('DATABASE_URL is sqlite::memory:, which no other process can read: there is nothing to back up')
      if (sqlite === undefined) {
        output.out(
          [
            '# Triad does not dump PostgreSQL itself. Back up the database of DATABASE_URL with pg_dump (same major version as the server or newer):',
            postgresNote(core),
            pgDumpCommand(core.databaseUrl, file),
            '# Restore it (instances stopped) with:',
            pgRestoreCommand(core.databaseUrl, file),
          ].join('\n'),
        )
      } else {
        if (secretsTarget !== undefined && secretsTarget === resolve(file)) throw new CommandError('--secrets must name a different file than the backup')
        const progress = pageProgress(output, 'backup')
        const result = await backupSqlite(sqlite, file, { overwrite: force, onProgress: progress.onProgress }).catch(commandFailed)
        progress.finish(result)
        output.out(`backed up ${sqlite} (${result.services.join(', ')}) to ${result.path}, ${result.bytes} bytes`)
      }
      const source = openSecretsFile(resolve(core.secretsFile))
      const document = await source.load().catch(commandFailed)
      if (secretsTarget === undefined) {
        output.out(
          countKeys(document) === 0
            ? `No secrets file at ${resolve(core.secretsFile)}: keys come from the environment (AUTHN_SECRET, PAYMENTS_VAULT_KEY, PAYMENTS_WEBHOOK_KEY); keep them in your secrets manager.`
            : `Not in this backup: the secrets file ${resolve(core.secretsFile)} (${countKeys(document)} keys). Without it restored tokens do not verify, stored cards do not open and webhook endpoints cannot sign. ` +
                'Copy it apart from the database backup: `triad backup FILE --secrets OTHER_FILE` (see docs/operations.md).',
        )
        return 0
      }
      if (countKeys(document) === 0) throw new CommandError(`--secrets: there is no secrets file at ${resolve(core.secretsFile)} (keys come from the environment)`)
      if (!force && existsSync(secretsTarget)) throw new CommandError(`${secretsTarget} exists; pass --force to replace it`)
      await openSecretsFile(secretsTarget)
        .update(() => document)
        .catch(commandFailed)
      output.out(`copied the secrets file (${countKeys(document)} keys) to ${secretsTarget}, mode 0600: keep it apart from the database backup`)
      return 0
    },
  }
}

export function restoreCommand(getCore: () => CoreConfig): Command {
  return {
    name: 'restore',
    summary: 'Restore a backup made by `triad backup` as the database of DATABASE_URL (SQLite), or print the pg_restore command (PostgreSQL).',
    usage: '<file> [--secrets FILE] [--force]',
    options: secretsOption,
    positionals: 1,
    run: async (args, output) => {
      const core = getCore()
      const [file = ''] = args.positionals
      const force = args.values.force === true
      const secretsSource = typeof args.values.secrets === 'string' ? resolve(args.values.secrets) : undefined
      const sqlite = sqlitePathOf(core.databaseUrl)
      if (core.databaseUrl.startsWith('sqlite::memory:')) throw new CommandError('DATABASE_URL is sqlite::memory:, which lives only inside one process: there is nowhere to restore to')
      // The secrets are read first: a backup of secrets that cannot be read must stop the restore before anything changes.
      let restored: SecretsDocument | undefined
      if (secretsSource !== undefined) {
        if (!existsSync(secretsSource)) throw new CommandError(`there is no secrets file at ${secretsSource}`)
        restored = await openSecretsFile(secretsSource).load().catch(commandFailed)
      }
      if (sqlite === undefined) {
        output.out(
          [
            '# Triad does not restore PostgreSQL itself. Stop every instance, then restore a pg_dump archive into the database of DATABASE_URL with:',
            postgresNote(core),
            pgRestoreCommand(core.databaseUrl, file),
            '# Start the instances again: they migrate the restored schema forward if the dump is older.',
          ].join('\n'),
        )
      } else {
        const progress = pageProgress(output, 'restore')
        const result = await restoreSqlite(file, sqlite, { overwrite: force, onProgress: progress.onProgress }).catch(commandFailed)
        progress.finish(result)
        output.out(`restored ${resolve(file)} (${result.services.join(', ')}) to ${result.path}${result.replaced ? ', replacing the database that was there' : ''}`)
      }
      const target = openSecretsFile(resolve(core.secretsFile), { chosen: core.secretsFileChosen })
      if (restored !== undefined) {
        const before = countKeys(await target.load().catch(commandFailed))
        const after = countKeys(await target.update((current) => mergeSecrets(current, restored)).catch(commandFailed))
        output.out(`restored the secrets to ${resolve(core.secretsFile)}: ${after - before} keys added, ${after} in all`)
        return 0
      }
      const present = countKeys(await target.load().catch(commandFailed))
      output.out(
        present > 0
          ? `Kept the secrets file ${resolve(core.secretsFile)} (${present} keys). Tokens and cards made under keys not in it will not verify; add the backed-up secrets with --secrets FILE.`
          : `No secrets restored and none at ${resolve(core.secretsFile)}: before starting Triad, put the backed-up secrets file there (or run again with --secrets FILE) ` +
              'or supply AUTHN_SECRET and PAYMENTS_VAULT_KEY as before. A start without them generates new keys: every token issued before is void and stored cards cannot be charged.',
      )
      return 0
    },
  }
}
