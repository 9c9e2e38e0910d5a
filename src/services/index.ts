import type { ServiceName } from '../core/config/core-config.ts'

/**
 * The services this code base serves, by the names TRIAD_SERVICES and --only use. Each is
 * loaded only when it is served (or its commands run): an instance that serves one service
 * does not carry the code of the others (about 40 MB of memory for avatar alone).
 */
export const serviceLoaders = {
  authn: async () => (await import('./authn/app.ts')).authnService,
  avatar: async () => (await import('./avatar/app.ts')).avatarService,
  payments: async () => (await import('./payments/app.ts')).paymentsService,
} as const satisfies Record<ServiceName, () => Promise<unknown>>

export type Services = { [N in ServiceName]: Awaited<ReturnType<(typeof serviceLoaders)[N]>> }

/** One-line descriptions of the services that have `triad <service> …` commands, for help. */
export const serviceCommandSummaries: Partial<Record<ServiceName, string>> = {
  authn: 'Manage epersons and groups; rotate the signing secret.',
  payments: 'Open and decide disputes, report fraud (test mode); rotate card vault keys.',
}
