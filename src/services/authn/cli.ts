import { type Command, CommandError, type CommandGroup, jsonOption, printResult, requireOption } from '../../core/cli/command.ts'
import { isAppError } from '../../core/errors/app-error.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import { credentialsCommands } from './credentials.cli.ts'
import { secretCommands } from './secret.cli.ts'
import { createAuthnServices } from './services.ts'
import type { AuthnConfig } from './config.ts'
import type { PublicEpersonRow } from './modules/epersons/index.ts'
import { ADMINISTRATOR_GROUP, type EpersonsService } from './modules/epersons/index.ts'

const LIST_PAGE = 500

function describe(row: PublicEpersonRow, admin: boolean) {
  return {
    uuid: row.uuid,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    canLogIn: row.can_log_in === 1,
    admin,
    lastActive: row.last_active,
  }
}


/** The authn commands, each run against the service's database with its own rules. */
export function authnCommands(env: ServiceCliEnvironment<AuthnConfig>): CommandGroup {
  const withEpersons = <T>(work: (epersons: EpersonsService) => Promise<T>): Promise<T> =>
    env.withService(async (deps) => {
      const { epersons } = await createAuthnServices(deps)
      try {
        return await work(epersons)
      } catch (error) {
        // Rule violations (unknown e-mail, taken e-mail, weak password) are the caller's to fix.
        if (isAppError(error) && error.status < 500) throw new CommandError(error.message)
        throw error
      }
    })

  const add: Command = {
    name: 'add',
    summary: 'Create an eperson who can log in with a password.',
    usage: '--email E --password P [--admin] [--first F] [--last L] [--json]',
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean' },
      first: { type: 'string' },
      last: { type: 'string' },
      ...jsonOption,
    },
    run: async (args, output) => {
      const email = requireOption(args, 'email')
      const password = requireOption(args, 'password')
      const admin = args.values.admin === true
      const row = await withEpersons((epersons) =>
        epersons.create({
          email,
          password,
          admin,
          firstName: typeof args.values.first === 'string' ? args.values.first : undefined,
          lastName: typeof args.values.last === 'string' ? args.values.last : undefined,
        }),
      )
      printResult(output, args, describe(row, admin), `created eperson ${row.email} (${row.uuid})${admin ? ' as an administrator' : ''}`)
      return 0
    },
  }

  const list: Command = {
    name: 'list',
    summary: 'List every eperson.',
    usage: '[--json]',
    options: jsonOption,
    run: async (args, output) => {
      await withEpersons(async (epersons) => {
        const all: ReturnType<typeof describe>[] = []
        let after: string | undefined
        for (;;) {
          const page = await epersons.list(LIST_PAGE, after)
          for (const row of page) all.push(describe(row, await epersons.isAdmin(row.uuid)))
          if (page.length < LIST_PAGE) break
          after = page[page.length - 1]?.email
        }
        if (args.values.json) output.out(JSON.stringify(all))
        else if (all.length === 0) output.out('no epersons')
        else
          for (const item of all) {
            const flags = [item.admin ? 'admin' : '', item.canLogIn ? '' : 'disabled'].filter(Boolean).join(', ')
            output.out(`${item.uuid}  ${item.email}${flags ? `  (${flags})` : ''}`)
          }
      })
      return 0
    },
  }

  const setPassword: Command = {
    name: 'set-password',
    summary: "Set an eperson's password (ends all of their sessions).",
    usage: '--email E --password P [--json]',
    options: { email: { type: 'string' }, password: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const email = requireOption(args, 'email')
      const password = requireOption(args, 'password')
      const row = await withEpersons(async (epersons) => {
        const found = await epersons.requireByEmail(email)
        await epersons.setPassword(found.uuid, password)
        return found
      })
      printResult(output, args, { uuid: row.uuid, email: row.email, passwordChanged: true }, `password of ${row.email} changed; all of their sessions ended`)
      return 0
    },
  }

  const toggle = (name: 'disable' | 'enable'): Command => ({
    name,
    summary: name === 'disable' ? 'Stop an eperson from logging in (ends all of their sessions).' : 'Let a disabled eperson log in again.',
    usage: '--email E [--json]',
    options: { email: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const email = requireOption(args, 'email')
      const row = await withEpersons(async (epersons) => {
        const found = await epersons.requireByEmail(email)
        await epersons.setCanLogIn(found.uuid, name === 'enable')
        return found
      })
      printResult(
        output,
        args,
        { uuid: row.uuid, email: row.email, canLogIn: name === 'enable' },
        `${row.email} ${name === 'enable' ? 'can log in again' : 'can no longer log in'}`,
      )
      return 0
    },
  })

  const groupAdd: Command = {
    name: 'add',
    summary: 'Create a group (or report that it exists).',
    usage: 'NAME [--json]',
    options: jsonOption,
    positionals: 1,
    run: async (args, output) => {
      const name = args.positionals[0]?.trim() ?? ''
      if (!name) throw new CommandError('the group name must not be empty')
      const result = await withEpersons(async (epersons) => {
        const existing = await epersons.findGroupByName(name)
        return { group: existing ?? (await epersons.ensureGroup(name, name === ADMINISTRATOR_GROUP)), created: !existing }
      })
      printResult(
        output,
        args,
        { uuid: result.group.uuid, name: result.group.name, created: result.created },
        result.created ? `created group ${result.group.name} (${result.group.uuid})` : `group ${result.group.name} already exists (${result.group.uuid})`,
      )
      return 0
    },
  }

  const addMember: Command = {
    name: 'add-member',
    summary: 'Add an eperson to a group.',
    usage: 'GROUP EMAIL [--json]',
    options: jsonOption,
    positionals: 2,
    run: async (args, output) => {
      const [groupName = '', email = ''] = args.positionals
      const result = await withEpersons((epersons) => epersons.addMember(groupName, email))
      printResult(
        output,
        args,
        { group: result.group.uuid, groupName: result.group.name, eperson: result.eperson.uuid, email: result.eperson.email, added: result.added },
        result.added ? `added ${result.eperson.email} to ${result.group.name}` : `${result.eperson.email} was already in ${result.group.name}`,
      )
      return 0
    },
  }

  return {
    name: 'authn',
    summary: 'Manage the epersons, groups, sessions, personal access tokens and passkeys of the authentication service, and its signing secret.',
    commands: [
      {
        name: 'eperson',
        summary: 'Create, list, enable or disable epersons and set their passwords.',
        commands: [add, list, setPassword, toggle('disable'), toggle('enable')],
      },
      { name: 'group', summary: 'Create groups and add members.', commands: [groupAdd, addMember] },
      ...credentialsCommands(env),
      secretCommands(env),
    ],
  }
}
