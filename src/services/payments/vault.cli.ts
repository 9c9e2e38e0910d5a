import { type CliOutput, type Command, CommandError, type CommandGroup, integerOption, jsonOption, printResult } from '../../core/cli/command.ts'
import { startProgress } from '../../core/cli/progress.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import { createVault, withPaymentsContext } from './compose.ts'
import type { PaymentsConfig } from './config.ts'
import { keyUsage, resealAll, retireRefusal, type VaultDb, type VaultService } from './modules/vault/index.ts'

/** A little longer than a server's check of the secrets file (keyring.ts). */
const SETTLE_MS = 6_000

/**
 * `triad payments vault …`: the card vault's keys. `rotate-key` adds a key and re-seals every
 * stored card under it while servers keep running; `retire-key` removes an old key once no
 * card uses it; `keys` lists them with the number of cards each sealed.
 */
export function vaultCommands(env: ServiceCliEnvironment<PaymentsConfig>): CommandGroup {
  const withVault = <T>(output: CliOutput, work: (vault: VaultService, db: VaultDb) => Promise<T>): Promise<T> =>
    withPaymentsContext(env, async (ctx, deps) => {
      const vault = createVault(ctx, deps)
      await vault.init({ info: (message) => output.err(message) })
      return work(vault, ctx.db as unknown as VaultDb)
    })

  const keys: Command = {
    name: 'keys',
    summary: 'List the vault keys: id, where it comes from, when it was made, whether it seals, and how many stored cards it sealed.',
    usage: '[--json]',
    options: jsonOption,
    run: async (args, output) => {
      const usage = await withVault(output, (vault, db) => keyUsage(db, vault.keyring))
      const lines = usage.keys.map((key) => `${key.id}  ${key.source.padEnd(11)}  ${(key.created ?? '-').padEnd(24)}  ${key.active ? 'seals' : 'opens'}  ${key.cards} card(s)`)
      if (usage.legacyCards > 0) lines.push(`${usage.legacyCards} card(s) sealed before keys had ids (re-sealed by rotate-key)`)
      printResult(output, args, usage, lines.join('\n'))
      return 0
    },
  }

  const rotate: Command = {
    name: 'rotate-key',
    summary: 'Generate a new vault key into the secrets file and re-seal every stored card under it, in batches, while servers run.',
    usage: '[--batch N] [--json]',
    options: { batch: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const batchSize = integerOption(args, 'batch', { min: 1, max: 100_000 }) ?? 500
      const result = await withVault(output, async (vault, db) => {
        const before = await vault.keyring.refresh()
        let newKeyId: string | undefined
        if (before.active.source === 'environment') {
          output.err('PAYMENTS_VAULT_KEY is set, so its first key seals: no key is generated; stored cards are re-sealed under it')
        } else {
          newKeyId = (await vault.keyring.rotate()).id
        }
        const progress = startProgress(output, { label: 'vault rotate-key', unit: 'cards', total: 0 })
        const resealed = await resealAll(db, vault.keyring, { batchSize, settleMs: SETTLE_MS, sealerOf: vault.sealerOf, onProgress: (scanned, total) => progress.update(scanned, total) })
        progress.finish(`re-sealed ${resealed.resealed.toLocaleString('en-US')} stored card(s), ${resealed.unreadable.toLocaleString('en-US')} unreadable`)
        const usage = await keyUsage(db, vault.keyring)
        const retirable = usage.legacyCards > 0 ? [] : usage.keys.filter((key) => !key.active && key.source === 'file' && key.cards === 0).map((key) => key.id)
        return { newKeyId, ...resealed, retirable }
      })
      const lines = [
        result.newKeyId ? `new vault key ${result.newKeyId} seals from now on` : `vault key ${result.activeKeyId} seals`,
        `re-sealed ${result.resealed} stored card(s)`,
      ]
      if (result.unreadable > 0) lines.push(`${result.unreadable} stored card(s) open under no known key and were left as they are`)
      if (result.retirable.length > 0) {
        lines.push(`after PAYMENTS_VAULT_TOKEN_TTL (tokens handed out before now), retire: ${result.retirable.map((id) => `triad payments vault retire-key ${id}`).join('; ')}`)
      }
      printResult(output, args, result, lines.join('\n'))
      return 0
    },
  }

  const retire: Command = {
    name: 'retire-key',
    summary: 'Remove an old vault key from the secrets file; refused while any stored card is sealed under it.',
    usage: '<keyId> [--json]',
    positionals: 1,
    options: jsonOption,
    run: async (args, output) => {
      const id = args.positionals[0] ?? ''
      await withVault(output, async (vault, db) => {
        const refusal = await retireRefusal(db, vault.keyring, id)
        if (refusal) throw new CommandError(refusal)
        await vault.keyring.retire([id])
      })
      printResult(output, args, { retired: id }, `retired vault key ${id}`)
      return 0
    },
  }

  return { name: 'vault', summary: 'Rotate and retire the card vault keys (kept in the secrets file).', commands: [keys, rotate, retire] }
}
