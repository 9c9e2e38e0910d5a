import { type CliOutput, type Command, CommandError, refusalsAsCommandErrors, type CommandGroup, integerOption, jsonOption, printResult, requireOption, UsageError } from '../../core/cli/command.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import { createWebhookSecrets, withPaymentsContext } from './compose.ts'
import type { PaymentsConfig } from './config.ts'
import { EVENT_TYPES } from './events/event-sink.port.ts'
import { createMerchantDirectory } from './modules/merchants/index.ts'
import { createWebhooksService, type WebhooksService } from './modules/webhooks/index.ts'

/** The operator is a member of no merchant: the CLI's access check is only that the merchant exists. */
const OPERATOR = 'operator'

function withWebhooks<T>(env: ServiceCliEnvironment<PaymentsConfig>, work: (webhooks: WebhooksService) => Promise<T>): Promise<T> {
  return withPaymentsContext(env, async (ctx, deps) => {
    const directory = createMerchantDirectory(ctx.database)
    const merchants = {
      async requireMerchant(_appId: string, merchantId: string) {
        const merchant = await directory.byId(merchantId)
        if (!merchant) throw new CommandError(`no merchant ${merchantId}`)
        return merchant
      },
    }
    return refusalsAsCommandErrors(async () => work(createWebhooksService({ ctx, merchants, secrets: await createWebhookSecrets(deps) })))
  })
}

function eventsOption(value: string): string[] {
  const events = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  const unknown = events.filter((item) => item !== '*' && !(EVENT_TYPES as readonly string[]).includes(item))
  if (events.length === 0 || unknown.length > 0) throw new UsageError(`--events takes a comma-separated list of ${EVENT_TYPES.join(', ')} (or *); unknown: ${unknown.join(', ') || 'none given'}`)
  return [...new Set(events)]
}

function line(webhook: { id: string; status: string; url: string; events: string[]; disabledReason?: string }): string {
  return `${webhook.id}  ${webhook.status.padEnd(8)}  ${webhook.url}  ${webhook.events.join(',')}${webhook.disabledReason ? `  (${webhook.disabledReason})` : ''}`
}

/**
 * `triad payments webhooks …`: a merchant's webhook endpoints, for an operator. `add` prints the
 * new endpoint's id and its signing secret (shown this once).
 */
export function webhookCommands(env: ServiceCliEnvironment<PaymentsConfig>): CommandGroup {
  const add: Command = {
    name: 'add',
    summary: 'Register a webhook endpoint for a merchant; prints its id and signing secret (shown once).',
    usage: '<merchantId> --url URL --events TYPE[,TYPE…]|* [--description TEXT] [--json]',
    positionals: 1,
    options: { url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' }, ...jsonOption },
    run: async (args, output: CliOutput) => {
      const url = requireOption(args, 'url')
      const events = eventsOption(requireOption(args, 'events'))
      const description = typeof args.values.description === 'string' ? args.values.description : undefined
      const webhook = await withWebhooks(env, (webhooks) =>
        webhooks.create(OPERATOR, args.positionals[0], { url, events: events as Parameters<WebhooksService['create']>[2]['events'], description }),
      )
      printResult(output, args, webhook, `${webhook.id}\nsecret: ${webhook.secret}`)
      return 0
    },
  }
  const list: Command = {
    name: 'list',
    summary: "List a merchant's webhook endpoints (newest first): id, status, URL, events, and why one was disabled.",
    usage: '<merchantId> [--limit N] [--json]',
    positionals: 1,
    options: { limit: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const limit = integerOption(args, 'limit', { min: 1, max: 1000 }) ?? 100
      const webhooks = await withWebhooks(env, (service) => service.list(OPERATOR, args.positionals[0], { limit }))
      printResult(output, args, webhooks, webhooks.map(line).join('\n'))
      return 0
    },
  }
  const remove: Command = {
    name: 'remove',
    summary: 'Remove a webhook endpoint (deliveries still waiting for it are cancelled).',
    usage: '<merchantId> <webhookId>',
    positionals: 2,
    run: async (args) => {
      await withWebhooks(env, (webhooks) => webhooks.remove(OPERATOR, args.positionals[0], args.positionals[1]))
      return 0
    },
  }
  const rotateSecret: Command = {
    name: 'rotate-secret',
    summary: 'Give a webhook endpoint a new signing secret; prints it (shown once). The old one keeps signing beside it for 24 hours.',
    usage: '<merchantId> <webhookId> [--json]',
    positionals: 2,
    options: { ...jsonOption },
    run: async (args, output) => {
      const webhook = await withWebhooks(env, (webhooks) => webhooks.rotateSecret(OPERATOR, args.positionals[0], args.positionals[1]))
      printResult(output, args, webhook, `${webhook.id}\nsecret: ${webhook.secret}\nthe previous secret signs too until ${webhook.previousSecretExpires ?? 'now'}`)
      return 0
    },
  }
  return { name: 'webhooks', summary: "A merchant's webhook endpoints.", commands: [add, list, remove, rotateSecret] }
}
