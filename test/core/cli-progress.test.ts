import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { startProgress } from '../../src/core/cli/progress.ts'
import { backupSqlite } from '../../src/core/db/backup.ts'
import { createDb } from '../../src/core/db/create-db.ts'
import { migrateToLatest } from '../../src/core/db/migrator.ts'
import { main } from '../../src/main.ts'
import { migrations } from '../../src/services/payments/migrations/index.ts'
import { createSealer } from '../../src/services/payments/modules/vault/index.ts'
import { vaultKeyIdOf } from '../../src/services/payments/modules/vault/vault.crypto.ts'
import { ownSqliteFiles } from '../helpers/triad-process.ts'

const CARDS = 100_000
const OLD_EVERY = 5

async function run(argv: string[], env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, { out: (text) => out.push(text), err: (text) => err.push(text) }, env)
  return { code, out: out.join('\n'), err }
}

/** The lines of `err` that report progress (`<label>: <done>/<total> <unit> (<n> %), <s> s`), as their percentages. */
function percentages(err: string[], label: string, unit: string): number[] {
  const pattern = new RegExp(`^${label}: [\\d,]+/[\\d,]+ ${unit} \\((\\d+) %\\), \\d+\\.\\d s$`)
  return err.flatMap((line) => {
    const match = pattern.exec(line)
    return match ? [Number(match[1])] : []
  })
}

const sealerOf = (keyHex: string) => createSealer([{ id: vaultKeyIdOf(keyHex), key: Buffer.from(keyHex, 'hex') }])

/**
 * `count` stored cards, one in OLD_EVERY sealed under `oldKey` and the rest under `newKey`,
 * written in batches in one transaction (a second or two, not minutes). A rotation to `newKey`
 * then looks at all of them and re-seals a fifth: the writes, one conditional update per card,
 * are what takes a loaded machine long.
 */
function seedCards(path: string, keys: { oldKey: string; newKey: string }, count: number): void {
  const sealers = { old: sealerOf(keys.oldKey), new: sealerOf(keys.newKey) }
  const db = new DatabaseSync(path)
  try {
    db.exec('begin')
    const insert = db.prepare(`insert into payments_vault_cards (id, sealed, created) values ${Array.from({ length: 500 }, () => '(?, ?, ?)').join(', ')}`)
    for (let start = 0; start < count; start += 500) {
      const values = Array.from({ length: 500 }, (_, offset) => {
        const id = `card_${String(start + offset).padStart(7, '0')}`
        const sealer = (start + offset) % OLD_EVERY === 0 ? sealers.old : sealers.new
        return [id, sealer.seal('4111111111111111', `card:${id}`), '2026-01-01T00:00:00.000Z']
      })
      insert.run(...values.flat())
    }
    db.exec('commit')
  } finally {
    db.close()
  }
}

test('on a database of 10⁵ stored cards, migrate, vault rotate-key, backup and restore report progress and a summary on stderr; stdout stays as it was', { skip: ownSqliteFiles, timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'triad-progress-'))
  const oldKey = randomBytes(32).toString('hex')
  const newKey = randomBytes(32).toString('hex')
  const env = { DATABASE_URL: `sqlite:${join(dir, 'triad.sqlite')}`, TRIAD_SECRETS_FILE: join(dir, 'secrets.json'), PAYMENTS_VAULT_KEY: oldKey, LOG_LEVEL: 'silent' }

  // Every payments migration but the last has run; then the cards arrive.
  const names = Object.keys(migrations)
  const database = await createDb(env.DATABASE_URL)
  await migrateToLatest(database.db, 'payments', Object.fromEntries(names.slice(0, -1).map((name) => [name, migrations[name]])))
  await database.destroy()
  seedCards(join(dir, 'triad.sqlite'), { oldKey, newKey }, CARDS)

  const migrated = await run(['migrate', '--only', 'payments'], env)
  assert.equal(migrated.code, 0, migrated.err.join('\n'))
  assert.equal(migrated.out, 'migrated payments on sqlite')
  assert.deepEqual(percentages(migrated.err, 'migrate', 'migrations'), [100])
  assert.match(migrated.err.at(-1) ?? '', /^migrate: 1 migration\(s\) applied \(payments\), \d+\.\d s$/)

  const rotated = await run(['payments', 'vault', 'rotate-key', '--batch', '2000', '--json'], { ...env, PAYMENTS_VAULT_KEY: `${newKey},${oldKey}` })
  assert.equal(rotated.code, 0, rotated.err.join('\n'))
  // The standard output is the JSON it always was; everything else went to the standard error.
  assert.equal(JSON.parse(rotated.out).resealed, CARDS / OLD_EVERY)
  // A line at every tenth (batches of 2,000 land on each); on a slow machine more, every 5 s, between them.
  const rotation = percentages(rotated.err, 'vault rotate-key', 'cards')
  assert.deepEqual(rotation.filter((percent) => percent % 10 === 0 && percent > 0), [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
  assert.deepEqual(rotation, [...rotation].sort((a, b) => a - b), 'in order')
  assert.match(rotated.err.at(-1) ?? '', /^vault rotate-key: re-sealed 20,000 stored card\(s\), 0 unreadable, \d+\.\d s$/)

  const file = join(dir, 'backup.sqlite')
  const backup = await run(['backup', file], env)
  assert.equal(backup.code, 0, backup.err.join('\n'))
  assert.match(backup.out, /^backed up .* \(payments\) to .*backup\.sqlite, \d+ bytes/)
  const backupSteps = percentages(backup.err, 'backup', 'pages')
  assert.ok(backupSteps.length >= 2 && backupSteps.at(-1) === 100, `backup progress: ${backup.err.join(' | ')}`)
  const summary = /^backup: ([\d,]+) pages \([\d,]+ bytes\), ([\d,]+) rows in (\d+) tables, \d+\.\d s$/.exec(backup.err.find((line) => line.includes(' rows in ')) ?? '')
  assert.ok(summary, backup.err.join(' | '))
  assert.ok(Number(summary[2]?.replaceAll(',', '')) > CARDS, 'every card and the migration history counted')

  const restoreEnv = { ...env, DATABASE_URL: `sqlite:${join(dir, 'restored.sqlite')}` }
  const restored = await run(['restore', file], restoreEnv)
  assert.equal(restored.code, 0, restored.err.join('\n'))
  assert.equal(percentages(restored.err, 'restore', 'pages').at(-1), 100)
  assert.ok(restored.err.some((line) => line.startsWith(`restore: ${summary[1]} pages`) && line.includes(`${summary[2]} rows in ${summary[3]} tables`)))

  // Copied in steps, the backup is still the database of one instant: a card written between two steps is not in it.
  const during = join(dir, 'during.sqlite')
  const writer = new DatabaseSync(join(dir, 'triad.sqlite'))
  let written = false
  await backupSqlite(join(dir, 'triad.sqlite'), during, {
    onProgress: () => {
      if (written) return
      writer.prepare("insert into payments_vault_cards (id, sealed, created) values ('card_late', 'x', '2026-01-02T00:00:00.000Z')").run()
      written = true
    },
  })
  writer.close()
  assert.ok(written)
  const cardsIn = (path: string) => {
    const db = new DatabaseSync(path, { readOnly: true })
    try {
      return Number((db.prepare('select count(*) as n from payments_vault_cards').get() as { n: number }).n)
    } finally {
      db.close()
    }
  }
  assert.equal(cardsIn(join(dir, 'triad.sqlite')), CARDS + 1)
  assert.equal(cardsIn(during), CARDS)
})

test('on a terminal the progress is a bar, ended by the summary line', () => {
  let drawn = ''
  const terminal = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        drawn += String(chunk)
        done()
      },
    }),
    { isTTY: true, columns: 100, cursorTo: () => true, clearLine: () => true, moveCursor: () => true },
  )
  const lines: string[] = []
  let now = 0
  const progress = startProgress({ out: () => {}, err: (text) => lines.push(text), terminal }, { label: 'backup', unit: 'pages', total: 40, now: () => now })
  progress.update(20)
  now = 1500
  progress.finish('40 pages')
  assert.deepEqual(lines, [], 'nothing as lines on a terminal')
  assert.match(drawn, /backup \[[█░]+\] \d+% \| \d+\/40 pages/)
  assert.match(drawn, /backup: 40 pages, 1\.5 s\n$/)
})
