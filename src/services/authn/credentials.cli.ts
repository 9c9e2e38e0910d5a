import { type CliOutput, type CommandGroup, jsonOption, printResult, refusalsAsCommandErrors, requireOption, UsageError } from '../../core/cli/command.ts'
import type { Clock } from '../../core/clock.ts'
import { parseDuration } from '../../core/config/duration.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import type { AuthnConfig } from './config.ts'
import { type Actor, actorFor, requestLogAudit } from './modules/audit/index.ts'
import { sessionFields, toPasskeyResponse, toTokenResponse } from './modules/credentials/index.ts'
import type { TokenScope } from './modules/personal-tokens/index.ts'
import { createAuthnServices } from './services.ts'

/** Rows per query while listing everything of one eperson. */
const LIST_PAGE = 100
/** The command line has no API base: links are relative to the API root. */
const BASE = '/api'

type AuthnServices = Awaited<ReturnType<typeof createAuthnServices>>

/**
 * `triad authn sessions|tokens|passkeys …`: what an administrator does over HTTP, for the
 * operator. Every change is written to the audit trail as made by `operator`, one JSON line on
 * stderr (`{"audit":"session.revoke",…}`), so a wrapper can ship it with the server's logs.
 */
export function credentialsCommands(env: ServiceCliEnvironment<AuthnConfig>): CommandGroup[] {
  const withServices = <T>(output: CliOutput, work: (services: AuthnServices, operator: Actor, clock: Clock) => Promise<T>): Promise<T> =>
    env.withService(async (deps) => {
      const services = await createAuthnServices(deps)
      const operator = actorFor(requestLogAudit, { info: (entry) => output.err(JSON.stringify(entry)) }, null, true)
      return refusalsAsCommandErrors(() => work(services, operator, deps.clock))
    })

  /** Every row of one eperson, page by page. */
  async function all<T>(page: (index: number) => Promise<{ rows: T[] }>): Promise<T[]> {
    const rows: T[] = []
    for (let index = 0; ; index++) {
      const next = (await page(index)).rows
      rows.push(...next)
      if (next.length < LIST_PAGE) return rows
    }
  }

  const emailOption = { email: { type: 'string' } } as const

  const sessions: CommandGroup = {
    name: 'sessions',
    summary: "List an eperson's sessions (one per login and device) and revoke one.",
    commands: [
      {
        name: 'list',
        summary: "List an eperson's live sessions, the newest first.",
        usage: '--email E [--json]',
        options: { ...emailOption, ...jsonOption },
        run: async (args, output) => {
          const email = requireOption(args, 'email')
          const rows = await withServices(output, async ({ epersons, sessions }) => {
            const eperson = await epersons.requireByEmail(email)
            return all((page) => sessions.list(eperson.uuid, page, LIST_PAGE))
          })
          const items = rows.map(sessionFields)
          const text = items.map((item) => `${item.id}  ${item.method.padEnd(8)}  ${item.device ?? '-'}  ${item.ip ?? '-'}  last seen ${item.lastSeenAt}`)
          printResult(output, args, items, text.join('\n') || 'no sessions')
          return 0
        },
      },
      {
        name: 'revoke',
        summary: 'Revoke one session: its tokens stop working (other instances: within AUTHN_REVOCATION_CACHE).',
        usage: '<session id> [--json]',
        positionals: 1,
        options: jsonOption,
        run: async (args, output) => {
          const id = (args.positionals[0] ?? '').toLowerCase()
          const row = await withServices(output, ({ sessions }, operator) => sessions.revoke(id, operator))
          printResult(output, args, { revoked: row.id, eperson: row.eperson_uuid }, `revoked session ${row.id}`)
          return 0
        },
      },
    ],
  }

  const tokens: CommandGroup = {
    name: 'tokens',
    summary: 'Create, list and revoke personal access tokens.',
    commands: [
      {
        name: 'create',
        summary: 'Create a personal access token for an eperson (printed once; stored hashed).',
        usage: '--email E --name N --expires 90d [--scope read|full] [--json]',
        options: { ...emailOption, name: { type: 'string' }, expires: { type: 'string' }, scope: { type: 'string' }, ...jsonOption },
        run: async (args, output) => {
          const email = requireOption(args, 'email')
          const name = requireOption(args, 'name')
          const expires = requireOption(args, 'expires')
          const scope = typeof args.values.scope === 'string' ? args.values.scope : 'read'
          if (scope !== 'read' && scope !== 'full') throw new UsageError('--scope must be read or full')
          let lifetimeMs: number
          try {
            lifetimeMs = parseDuration(expires)
          } catch {
            throw new UsageError(`--expires must be a duration such as 30d or 12h (got ${JSON.stringify(expires)})`)
          }
          const created = await withServices(output, async ({ epersons, personalTokens }, operator, clock) => {
            const eperson = await epersons.requireByEmail(email)
            const expiresAt = new Date(clock.now().getTime() + lifetimeMs).toISOString()
            return personalTokens.create({ epersonUuid: eperson.uuid, name, expiresAt, scope: scope as TokenScope }, operator)
          })
          const item = { ...toTokenResponse(BASE, created.row), token: created.token }
          printResult(output, args, item, `${created.token}\n(${item.id}, scope ${scope}, expires ${item.expiresAt}: shown once, store it now)`)
          return 0
        },
      },
      {
        name: 'list',
        summary: "List an eperson's personal access tokens (never their secrets).",
        usage: '--email E [--json]',
        options: { ...emailOption, ...jsonOption },
        run: async (args, output) => {
          const email = requireOption(args, 'email')
          const rows = await withServices(output, async ({ epersons, personalTokens }) => {
            const eperson = await epersons.requireByEmail(email)
            return all((page) => personalTokens.list(eperson.uuid, page, LIST_PAGE))
          })
          const items = rows.map((row) => toTokenResponse(BASE, row))
          const text = items.map(
            (item) => `${item.id}  ${item.tokenHint}  ${item.scopes.join(',').padEnd(4)}  ${item.name}  ${item.revokedAt ? 'revoked' : `expires ${item.expiresAt}`}`,
          )
          printResult(output, args, items, text.join('\n') || 'no personal access tokens')
          return 0
        },
      },
      {
        name: 'revoke',
        summary: 'Revoke a personal access token.',
        usage: '<token id> [--json]',
        positionals: 1,
        options: jsonOption,
        run: async (args, output) => {
          const id = args.positionals[0] ?? ''
          const row = await withServices(output, ({ personalTokens }, operator) => personalTokens.revoke(id, operator))
          printResult(output, args, { revoked: row.id, eperson: row.eperson_uuid }, `revoked personal access token ${row.id} (${row.name})`)
          return 0
        },
      },
    ],
  }

  const passkeys: CommandGroup = {
    name: 'passkeys',
    summary: "List and remove an eperson's passkeys (they register their own, over HTTP).",
    commands: [
      {
        name: 'list',
        summary: "List an eperson's passkeys.",
        usage: '--email E [--json]',
        options: { ...emailOption, ...jsonOption },
        run: async (args, output) => {
          const email = requireOption(args, 'email')
          const rows = await withServices(output, async ({ epersons, passkeys }) => {
            const eperson = await epersons.requireByEmail(email)
            return all((page) => passkeys.list(eperson.uuid, page, LIST_PAGE))
          })
          const items = rows.map((row) => toPasskeyResponse(BASE, row))
          printResult(output, args, items, items.map((item) => `${item.id}  ${item.name}  ${item.deviceType}  last used ${item.lastUsedAt ?? 'never'}`).join('\n') || 'no passkeys')
          return 0
        },
      },
      {
        name: 'remove',
        summary: 'Remove a passkey: it can no longer log in.',
        usage: '<passkey id> [--json]',
        positionals: 1,
        options: jsonOption,
        run: async (args, output) => {
          const id = args.positionals[0] ?? ''
          const row = await withServices(output, ({ passkeys }, operator) => passkeys.remove(id, operator))
          printResult(output, args, { removed: row.id, eperson: row.eperson_uuid }, `removed passkey ${row.id} (${row.name})`)
          return 0
        },
      },
    ],
  }

  return [sessions, tokens, passkeys]
}
