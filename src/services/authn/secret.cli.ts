import { type CliOutput, type Command, CommandError, type CommandGroup, jsonOption, printResult } from '../../core/cli/command.ts'
import type { Keyring } from '../../core/security/keyring.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import type { AuthnConfig } from './config.ts'
import { createAuthnServices } from './services.ts'

/**
 * `triad authn secret …`: rotation of the JWT signing secret in the secrets file. Tokens carry
 * the id of the key that signed them (`kid`); after a rotation new tokens are signed with the
 * new key (by each server within its check interval, 5 s) and older ones keep verifying until
 * they expire, or until their key is retired (`--revoke-old`, or `retire <id>`).
 */
export function secretCommands(env: ServiceCliEnvironment<AuthnConfig>): CommandGroup {
  const withKeyring = <T>(output: CliOutput, work: (keyring: Keyring) => Promise<T>): Promise<T> =>
    env.withService(async (deps) => {
      const { keyring } = await createAuthnServices(deps, { info: (message) => output.err(message) })
      return work(keyring)
    })

  const list: Command = {
    name: 'list',
    summary: 'List the signing keys: id, where it comes from, when it was made, which one signs.',
    usage: '[--json]',
    options: jsonOption,
    run: async (args, output) => {
      const keys = await withKeyring(output, async (keyring) => {
        const set = await keyring.refresh()
        return set.keys.map((key) => ({ id: key.id, source: key.source, created: key.created ?? null, active: key.id === set.active.id }))
      })
      printResult(output, args, keys, keys.map((key) => `${key.id}  ${key.source.padEnd(11)}  ${key.created ?? '-'.padEnd(24)}  ${key.active ? 'signs' : 'verifies'}`).join('\n'))
      return 0
    },
  }

  const rotate: Command = {
    name: 'rotate',
    summary: 'Generate a new signing secret into the secrets file; with --revoke-old, retire every older key (their tokens stop verifying).',
    usage: '[--revoke-old] [--json]',
    options: { 'revoke-old': { type: 'boolean' }, ...jsonOption },
    run: async (args, output) => {
      const result = await withKeyring(output, async (keyring) => {
        const before = await keyring.refresh()
        if (before.active.source === 'environment') {
          throw new CommandError('AUTHN_SECRET is set, so it signs: rotate it by changing AUTHN_SECRET (tokens signed with the old value stop verifying)')
        }
        const added = await keyring.rotate()
        const retired = args.values['revoke-old'] ? before.keys.filter((key) => key.source === 'file').map((key) => key.id) : []
        if (retired.length > 0) await keyring.retire(retired)
        return { keyId: added.id, retired }
      })
      const text = [`new signing key ${result.keyId}`]
      if (result.retired.length > 0) text.push(`retired ${result.retired.join(', ')}: tokens they signed no longer verify`)
      else text.push('tokens signed by older keys verify until they expire (or retire them: triad authn secret retire <id>)')
      printResult(output, args, result, text.join('\n'))
      return 0
    },
  }

  const retire: Command = {
    name: 'retire',
    summary: 'Remove a signing key from the secrets file: tokens it signed stop verifying.',
    usage: '<keyId> [--json]',
    positionals: 1,
    options: jsonOption,
    run: async (args, output) => {
      const id = args.positionals[0] ?? ''
      await withKeyring(output, async (keyring) => {
        const set = await keyring.refresh()
        const key = set.find(id)
        if (!key) throw new CommandError(`no signing key has the id ${id} (see \`triad authn secret list\`)`)
        if (key.source === 'environment') throw new CommandError(`key ${id} is AUTHN_SECRET: change the variable instead`)
        if (key.id === set.active.id) throw new CommandError(`key ${id} signs new tokens: rotate first (\`triad authn secret rotate\`)`)
        await keyring.retire([id])
      })
      printResult(output, args, { retired: id }, `retired ${id}`)
      return 0
    },
  }

  return { name: 'secret', summary: 'Rotate and retire the JWT signing secret (kept in the secrets file).', commands: [list, rotate, retire] }
}
