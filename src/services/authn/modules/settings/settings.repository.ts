import { isUniqueViolation } from '../../../../core/db/errors.ts'
import type { Executor } from '../../db.ts'
import type { SettingsTables } from './settings.table.ts'

type DbExecutor = Executor<SettingsTables>

/**
 * Reads a setting, creating it with `generate()` when it does not exist yet. Several instances
 * starting together may race: the first insert wins and the others read its value, so every
 * instance ends up with the same secret.
 */
export async function getOrCreateSetting(db: DbExecutor, name: string, generate: () => string): Promise<string> {
  const existing = await db.selectFrom('authn_settings').select('value').where('name', '=', name).executeTakeFirst()
  if (existing) return existing.value
  try {
    const value = generate()
    await db.insertInto('authn_settings').values({ name, value }).execute()
    return value
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    const winner = await db.selectFrom('authn_settings').select('value').where('name', '=', name).executeTakeFirstOrThrow()
    return winner.value
  }
}

/** A setting's value, if it exists (the JWT secret of databases from before the secrets file). */
export async function findSetting(db: DbExecutor, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('authn_settings').select('value').where('name', '=', name).executeTakeFirst()
  return row?.value
}

/** Deletes a setting if it still holds `value` (another instance may have moved it already). */
export async function deleteSetting(db: DbExecutor, name: string, value: string): Promise<void> {
  await db.deleteFrom('authn_settings').where('name', '=', name).where('value', '=', value).execute()
}
