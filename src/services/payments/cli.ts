import { type CliOutput, type Command, refusalsAsCommandErrors, type CommandGroup, integerOption, jsonOption, type ParsedArgs, printResult, UsageError } from '../../core/cli/command.ts'
import type { ServiceCliEnvironment } from '../../core/service.ts'
import { createDisputes, withPaymentsContext } from './compose.ts'
import type { PaymentsConfig } from './config.ts'
import type { DisputesService } from './modules/disputes/index.ts'
import { createMerchantsService } from './modules/merchants/index.ts'
import { vaultCommands } from './vault.cli.ts'
import { webhookCommands } from './webhooks.cli.ts'

/** Runs `work` with the disputes service; a refused operation (AppError) is a CommandError. */
function withDisputes<T>(env: ServiceCliEnvironment<PaymentsConfig>, work: (disputes: DisputesService) => Promise<T>): Promise<T> {
  return withPaymentsContext(env, async (ctx) => {
    return refusalsAsCommandErrors(async () => work(createDisputes(ctx, createMerchantsService(ctx))))
  })
}

function print(output: CliOutput, args: ParsedArgs, object: { id: string }): void {
  printResult(output, args, object, object.id)
}

/**
 * `triad payments …`: in test mode an operator plays the card network, opening and deciding
 * disputes and reporting fraud. Amounts are in minor units. Each prints the new object's id,
 * or the whole object with --json.
 */
export function paymentsCommands(env: ServiceCliEnvironment<PaymentsConfig>): CommandGroup {
  const open: Command = {
    name: 'open',
    summary: 'Open a dispute on a captured transaction (default: all of what is captured and not refunded).',
    usage: '<transactionId> [--amount N] [--reason CODE] [--json]',
    positionals: 1,
    options: { amount: { type: 'string' }, reason: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const amount = integerOption(args, 'amount')
      const reason = integerOption(args, 'reason')
      const dispute = await withDisputes(env, (disputes) => disputes.open(args.positionals[0], { amount, reason }))
      print(output, args, dispute)
      return 0
    },
  }
  const decide: Command = {
    name: 'decide',
    summary: 'Decide a dispute: --won, or --lost (the merchant pays the amount back plus the dispute fee).',
    usage: '<disputeId> --won|--lost [--json]',
    positionals: 1,
    options: { won: { type: 'boolean' }, lost: { type: 'boolean' }, ...jsonOption },
    run: async (args, output) => {
      if (Boolean(args.values.won) === Boolean(args.values.lost)) throw new UsageError('give exactly one of --won or --lost')
      const outcome = args.values.won ? 'won' : 'lost'
      const dispute = await withDisputes(env, (disputes) => disputes.decide(args.positionals[0], outcome))
      print(output, args, dispute)
      return 0
    },
  }
  const report: Command = {
    name: 'report',
    summary: 'Report a fraud alert on a transaction (reason 0-8: 0 Misc, 1 Fraudulent usage, … 8 Cardholder manipulated).',
    usage: '<transactionId> [--reason 0-8] [--json]',
    positionals: 1,
    options: { reason: { type: 'string' }, ...jsonOption },
    run: async (args, output) => {
      const reason = integerOption(args, 'reason')
      const fraud = await withDisputes(env, (disputes) => disputes.reportFraud(args.positionals[0], reason))
      print(output, args, fraud)
      return 0
    },
  }
  return {
    name: 'payments',
    summary: 'Payments operations: play the card network in test mode (disputes, fraud alerts); rotate the card vault keys; manage webhook endpoints.',
    commands: [
      { name: 'dispute', summary: 'Open and decide disputes.', commands: [open, decide] },
      { name: 'fraud', summary: 'Report fraud alerts.', commands: [report] },
      vaultCommands(env),
      webhookCommands(env),
    ],
  }
}
