import type { ServiceName } from '../core/config/core-config.ts'
import { authnService } from './authn/app.ts'
import { avatarService } from './avatar/app.ts'
import { paymentsService } from './payments/app.ts'

/** The services this code base serves, by the names TRIAD_SERVICES and --only use. */
export const services = {
  authn: authnService,
  avatar: avatarService,
  payments: paymentsService,
} as const satisfies Record<ServiceName, unknown>
