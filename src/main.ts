import { buildApp, holdPortWhileStarting, migrateServices, pendingMigrationCount } from './app.ts'
import { ConfigError, type Config, loadConfig } from './config.ts'
import { backupCommand, restoreCommand } from './core/cli/backup.ts'
import { type CliOutput, type Command, type CommandGroup, runCommand, UsageError } from './core/cli/command.ts'
import { startProgress } from './core/cli/progress.ts'
import { SERVICE_NAMES, type ServiceName } from './core/config/core-config.ts'
import { createDb } from './core/db/create-db.ts'
import { listenUntilSignalled } from './core/http/graceful.ts'
import { createLifecycle } from './core/http/lifecycle.ts'
import { followParent, startedByWrapper } from './core/process/follow-parent.ts'
import { createIdGenerator } from './core/ids.ts'
import { noMetrics } from './core/metrics/registry.ts'
import { systemClock } from './core/clock.ts'
import { openConfiguredSecrets } from './core/security/secrets.ts'
import type { ServiceBase, ServiceDefinition } from './core/service.ts'
import { serviceCommandSummaries, serviceLoaders } from './services/index.ts'

const onlyOption = { only: { type: 'string', short: 'o' } } as const

function servicesFrom(config: Config, only: unknown): ServiceName[] {
  if (typeof only !== 'string') return config.core.services
  const names = only
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
  const unknown = names.filter((name) => !(SERVICE_NAMES as readonly string[]).includes(name))
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(`--only takes a comma-separated list of ${SERVICE_NAMES.join(', ')} (got "${only}")`)
  }
  return [...new Set(names)] as ServiceName[]
}

function withServices(config: Config, services: ServiceName[]): Config {
  return { ...config, core: { ...config.core, services } }
}

function serveCommand(getConfig: () => Config): Command {
  return {
    name: 'serve',
    summary: 'Serve the HTTP APIs (all of TRIAD_SERVICES, or those given with --only) on HOST:PORT.',
    usage: '[--only authn,avatar,payments] [--port N] [--host H]',
    options: { ...onlyOption, port: { type: 'string', short: 'p' }, host: { type: 'string' } },
    run: async (args) => {
      const base = getConfig()
      const port = args.values.port === undefined ? base.core.port : Number(args.values.port)
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer between 0 and 65535 (got "${args.values.port}")`)
      const host = typeof args.values.host === 'string' ? args.values.host : base.core.host
      const config = withServices(base, servicesFrom(base, args.values.only))
      const lifecycle = createLifecycle()
      const prettyLogs = process.stdout.isTTY
      // From here to shutdown the port never refuses a connection: the holder answers "starting"
      // until the app takes its socket over.
      const holder = await holdPortWhileStarting(config, { port, host }, { prettyLogs })
      let app: Awaited<ReturnType<typeof buildApp>>
      try {
        app = await buildApp(config, { prettyLogs, lifecycle, holder })
      } catch (error) {
        await holder.close()
        throw error
      }
      const address = await listenUntilSignalled(app, lifecycle, { holder, timeoutMs: config.core.shutdownTimeoutMs })
      app.log.info(`serving ${config.core.services.join(', ')} on ${address} (docs at ${address}/docs)`)
      // Under `npm start` (or the launcher), leave with the process that started us.
      if (startedByWrapper()) followParent()
      return new Promise<number>(() => {})
    },
  }
}

function migrateCommand(getConfig: () => Config): Command {
  return {
    name: 'migrate',
    summary: 'Bring the database schema of every service (or those given with --only) up to date.',
    usage: '[--only authn,avatar,payments]',
    options: onlyOption,
    run: async (args, output) => {
      const config = getConfig()
      const names = servicesFrom(config, args.values.only)
      const database = await createDb(config.core.databaseUrl, { preparedStatements: config.core.preparedStatements })
      try {
        const progress = startProgress(output, { label: 'migrate', unit: 'migrations', total: await pendingMigrationCount(database, names) })
        let applied = 0
        await migrateServices(database, names, () => progress.update(++applied))
        progress.finish(`${applied} migration(s) applied (${names.join(', ')})`)
        output.out(`migrated ${names.join(', ')} on ${database.dialect}`)
      } finally {
        await database.destroy()
      }
      return 0
    },
  }
}

/**
 * The `triad <service> …` groups. Only the service named on the command line is loaded; the
 * others appear in `triad --help` by their summaries alone.
 */
async function serviceCommands(getConfig: () => Config, argv: string[]): Promise<CommandGroup[]> {
  const groups: CommandGroup[] = []
  for (const name of SERVICE_NAMES) {
    const summary = serviceCommandSummaries[name]
    if (!summary) continue
    if (argv[0] !== name) {
      groups.push({ name, summary, commands: [] })
      continue
    }
    const service = (await serviceLoaders[name]()) as ServiceDefinition<Config[typeof name]>
    if (!service.commands) continue
    groups.push(
      service.commands({
        withService: async (work) => {
          const config = getConfig()
          const database = await createDb(config.core.databaseUrl, { preparedStatements: config.core.preparedStatements })
          try {
            await migrateServices(database, [name])
            const base: ServiceBase = {
              core: config.core,
              database,
              clock: systemClock,
              ids: createIdGenerator(systemClock),
              secrets: openConfiguredSecrets(config.core, systemClock),
              lifecycle: createLifecycle(),
              metrics: noMetrics,
            }
            return await work({ ...base, config: config[name] })
          } finally {
            await database.destroy()
          }
        },
      }),
    )
  }
  return groups
}

export async function buildCli(getConfig: () => Config, argv: string[]): Promise<CommandGroup> {
  return {
    name: 'triad',
    summary: 'Triad serves three HTTP APIs: authn (repository authentication), avatar (conversational engine) and payments.',
    commands: [
      serveCommand(getConfig),
      migrateCommand(getConfig),
      backupCommand(() => getConfig().core),
      restoreCommand(() => getConfig().core),
      ...(await serviceCommands(getConfig, argv)),
    ],
  }
}

const stdio: CliOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  terminal: process.stderr.isTTY ? process.stderr : undefined,
}

/** The `triad` command line. Returns the exit code. */
export async function main(argv: string[], output: CliOutput = stdio, env?: Record<string, string | undefined>): Promise<number> {
  let config: Config | undefined
  const getConfig = () => {
    config ??= env === undefined ? loadConfig() : loadConfig(env)
    return config
  }
  try {
    return await runCommand(await buildCli(getConfig, argv), argv, output)
  } catch (error) {
    if (error instanceof ConfigError) {
      output.err(`triad: ${error.message}`)
      return 1
    }
    const message = error instanceof Error ? error.message : String(error)
    output.err(`triad: ${message}`)
    return 1
  }
}
