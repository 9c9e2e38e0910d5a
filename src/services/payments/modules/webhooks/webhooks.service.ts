import { withTransaction } from '../../../../core/db/transaction.ts'
import type { PageRequest } from '../../../../core/http/pagination.ts'
import { actorField } from '../../actor.ts'
import type { PaymentsContext } from '../../context.ts'
import type { DeliveryAttemptsTable, EventDeliveriesTable, EventsTable } from '../../tables.ts'
import type { SecretBox } from './webhooks.keys.ts'
import { newSigningSecret } from './webhooks.keys.ts'
import { subscribes } from './event-recorder.ts'
import { isLoopbackHost } from '../../../../core/http/loopback.ts'
import { literalAddressRefusal } from './webhook-destination.ts'
import { webhookErrors } from './webhooks.errors.ts'
import * as repo from './webhooks.repository.ts'
import type { AttemptDto, CreateWebhookInput, DeliveryDto, EventDto, WebhookDto } from './webhooks.schemas.ts'

/** How long a rotated-out secret keeps signing deliveries beside the new one (Svix's choice too). */
const PREVIOUS_SECRET_VALID_MS = 24 * 3_600_000

/** `now` hides a previous secret's expiry once it has passed (it no longer signs anything). */
function toWebhook(row: repo.EndpointRow, now: string): WebhookDto {
  const previousExpires = row.previous_secret_expires
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    ...(row.description === null ? {} : { description: row.description }),
    created: row.created,
    status: row.status,
    ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
    ...(row.disabled_at === null ? {} : { disabled: row.disabled_at }),
    ...(row.failing_since === null ? {} : { failingSince: row.failing_since }),
    ...(previousExpires !== null && previousExpires > now ? { previousSecretExpires: previousExpires } : {}),
  }
}

function toAttempt(row: DeliveryAttemptsTable): AttemptDto {
  return {
    id: row.id,
    created: row.started,
    status: row.succeeded === 1 ? 'succeeded' : 'failed',
    latency: row.latency_ms,
    ...(row.response_status === null ? {} : { responseCode: row.response_status }),
    ...(row.error === null ? {} : { error: row.error }),
  }
}

function toDelivery(row: EventDeliveriesTable, attempts: DeliveryAttemptsTable[]): DeliveryDto {
  return {
    id: row.id,
    webhookId: row.endpoint_id,
    status: row.status,
    created: row.created,
    ...(row.status === 'pending' ? { nextAttempt: row.next_attempt } : {}),
    ...(row.completed === null ? {} : { completed: row.completed }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    attempts: attempts.map(toAttempt),
  }
}

/**
 * A webhook URL: absolute, https, without credentials or fragment, not at a literal private or
 * loopback address (webhook-destination.ts; names are checked at each connection). Plain http
 * is taken for a loopback host (127.0.0.0/8, ::1, localhost) when the merchant is a test
 * merchant (a receiver on the developer's machine), or anywhere when PAYMENTS_WEBHOOK_ALLOW_HTTP
 * is set.
 */
function checkWebhookUrl(text: string, options: { testMerchant: boolean; allowHttp: boolean; allowPrivate: boolean }): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw webhookErrors.badUrl('must be an absolute URL such as https://shop.example/webhooks')
  }
  if (url.username !== '' || url.password !== '') throw webhookErrors.badUrl('must not carry a user name or password')
  if (url.hash !== '') throw webhookErrors.badUrl('must not have a fragment (#…)')
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw webhookErrors.badUrl('must be an https URL')
  if (url.protocol === 'http:' && !options.allowHttp) {
    if (!isLoopbackHost(url.hostname)) throw webhookErrors.badUrl('must be https (plain http only to 127.0.0.1, ::1 or localhost, for test merchants)')
    if (!options.testMerchant) throw webhookErrors.badUrl('must be https: plain http to a loopback host is for test merchants only')
  }
  // A loopback host is passed at connection time only because registration kept it to test merchants.
  if (isLoopbackHost(url.hostname) && !options.testMerchant && !options.allowPrivate) {
    throw webhookErrors.badUrl(`must not point into a private network: ${url.hostname}, a loopback host: for test merchants only (PAYMENTS_WEBHOOK_ALLOW_PRIVATE allows it)`)
  }
  const refused = literalAddressRefusal(url, { allowPrivate: options.allowPrivate })
  if (refused) throw webhookErrors.badUrl(`must not point into a private network: ${refused}`)
  return url.href
}

export interface WebhooksDeps {
  ctx: PaymentsContext
  /** The merchants module's access check (an operator's CLI passes one without membership). */
  merchants: { requireMerchant(appId: string, merchantId: string): Promise<{ test: number }> }
  secrets: SecretBox
  /** Told when a resend made deliveries due now (the local worker looks soon). */
  scheduled?: () => void
}

/** Endpoints (register, list, remove, enable), the events list and resends. */
export function createWebhooksService(deps: WebhooksDeps) {
  const { ctx, merchants } = deps
  const db = ctx.db
  const now = () => ctx.clock.now().toISOString()

  async function requireEndpoint(appId: string, merchantId: string, webhookId: string): Promise<repo.EndpointRow> {
    await merchants.requireMerchant(appId, merchantId)
    const row = await repo.findEndpoint(db, webhookId)
    if (!row || row.merchant_id !== merchantId || row.deleted !== null) throw webhookErrors.notFound()
    return row
  }

  async function eventsWithDeliveries(rows: EventsTable[]): Promise<EventDto[]> {
    const ids = rows.map((row) => row.id)
    const [deliveries, attempts] = await Promise.all([repo.deliveriesOf(db, ids), repo.attemptsOf(db, ids)])
    const attemptsByDelivery = Map.groupBy(attempts, (attempt) => attempt.delivery_id)
    const byEvent = Map.groupBy(deliveries, (delivery) => delivery.event_id)
    return rows.map((row) => ({
      id: row.id,
      type: row.type,
      created: row.created,
      data: JSON.parse(row.data) as unknown,
      ...actorField(row),
      deliveries: (byEvent.get(row.id) ?? []).map((delivery) => toDelivery(delivery, attemptsByDelivery.get(delivery.id) ?? [])),
    }))
  }

  async function requireEvent(appId: string, merchantId: string, eventId: string): Promise<EventsTable> {
    await merchants.requireMerchant(appId, merchantId)
    const row = await repo.findEvent(db, eventId)
    if (!row || row.merchant_id !== merchantId) throw webhookErrors.eventNotFound()
    return row
  }

  return {
    /** Registers an endpoint; the answer carries the signing secret, the only time it is shown. */
    async create(appId: string, merchantId: string, input: CreateWebhookInput): Promise<WebhookDto & { secret: string }> {
      const merchant = await merchants.requireMerchant(appId, merchantId)
      const url = checkWebhookUrl(input.url, { testMerchant: merchant.test === 1, allowHttp: ctx.config.webhooks.allowHttp, allowPrivate: ctx.config.webhooks.allowPrivate })
      const id = ctx.ids.timeOrdered()
      const secret = newSigningSecret()
      const row = {
        id,
        merchant_id: merchantId,
        url,
        events: JSON.stringify(input.events.includes('*') ? ['*'] : input.events),
        description: input.description ?? null,
        secret_sealed: await deps.secrets.seal(secret, id),
        previous_secret_sealed: null,
        previous_secret_expires: null,
        created: now(),
        status: 'enabled' as const,
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        deleted: null,
      }
      await repo.insertEndpoint(db, row)
      return { ...toWebhook(row, row.created), secret }
    },

    async list(appId: string, merchantId: string, page: PageRequest): Promise<WebhookDto[]> {
      await merchants.requireMerchant(appId, merchantId)
      return (await repo.listEndpoints(db, merchantId, page)).map((row) => toWebhook(row, now()))
    },

    async get(appId: string, merchantId: string, webhookId: string): Promise<WebhookDto> {
      return toWebhook(await requireEndpoint(appId, merchantId, webhookId), now())
    },

    /** Removes an endpoint; deliveries still waiting for it are cancelled. */
    async remove(appId: string, merchantId: string, webhookId: string): Promise<void> {
      await requireEndpoint(appId, merchantId, webhookId)
      const removed = await withTransaction(ctx.database, (trx) => repo.removeEndpoint(trx, webhookId, now()))
      if (!removed) throw webhookErrors.notFound()
    },

    /**
     * Gives the endpoint a new signing secret, shown in this answer only. The one it replaces
     * keeps signing deliveries beside it for 24 hours (two signatures in each header), so the
     * receiver can switch to the new secret without refusing a delivery; a second rotation
     * within the 24 hours drops the oldest.
     */
    async rotateSecret(appId: string, merchantId: string, webhookId: string): Promise<WebhookDto & { secret: string }> {
      await requireEndpoint(appId, merchantId, webhookId)
      const endpoint = { id: webhookId, merchantId }
      const replaced = await repo.sealedSecretOf(db, endpoint)
      if (replaced === undefined) throw webhookErrors.notFound()
      const secret = newSigningSecret()
      const previousExpires = new Date(ctx.clock.now().getTime() + PREVIOUS_SECRET_VALID_MS).toISOString()
      const sealed = await deps.secrets.seal(secret, webhookId)
      if (!(await repo.replaceSecret(db, endpoint, { replaced, sealed, previousExpires }))) throw webhookErrors.rotationRaced()
      return { ...toWebhook(await requireEndpoint(appId, merchantId, webhookId), now()), secret }
    },

    /** Enables an endpoint Triad disabled; events from while it was disabled can be resent. */
    async enable(appId: string, merchantId: string, webhookId: string): Promise<WebhookDto> {
      await requireEndpoint(appId, merchantId, webhookId)
      await repo.enableEndpoint(db, webhookId)
      return toWebhook(await requireEndpoint(appId, merchantId, webhookId), now())
    },

    /** The merchant's events, newest first, each with its deliveries and their attempts. */
    async listEvents(
      appId: string,
      merchantId: string,
      page: PageRequest,
      filter: { type?: string; transactionId?: string; deliveryStatus?: repo.EventFilter['deliveryStatus'] },
    ): Promise<EventDto[]> {
      await merchants.requireMerchant(appId, merchantId)
      return eventsWithDeliveries(await repo.listEvents(db, merchantId, page, { type: filter.type, subjectId: filter.transactionId, deliveryStatus: filter.deliveryStatus }))
    },

    async getEvent(appId: string, merchantId: string, eventId: string): Promise<EventDto> {
      const [event] = await eventsWithDeliveries([await requireEvent(appId, merchantId, eventId)])
      return event
    },

    /**
     * Sends an event again, with its id and body unchanged: a new delivery, due now, to the
     * named endpoint or to every enabled endpoint that takes the event's type.
     */
    async resend(appId: string, merchantId: string, eventId: string, webhookId: string | undefined): Promise<EventDto> {
      const event = await requireEvent(appId, merchantId, eventId)
      let targets: string[]
      if (webhookId !== undefined) {
        const endpoint = await requireEndpoint(appId, merchantId, webhookId)
        if (endpoint.status !== 'enabled') throw webhookErrors.disabled()
        targets = [endpoint.id]
      } else {
        const endpoints = await repo.subscribedEndpoints(db, merchantId)
        targets = endpoints.filter((endpoint) => subscribes(JSON.parse(endpoint.events) as string[], event.type)).map((endpoint) => endpoint.id)
        if (targets.length === 0) throw webhookErrors.noEndpoint()
      }
      const created = now()
      await repo.insertDeliveries(
        db,
        ctx.database.dialect,
        targets.map((endpointId) => ({
          id: ctx.ids.timeOrdered(),
          event_id: event.id,
          endpoint_id: endpointId,
          subject_id: event.subject_id,
          subject_seq: event.subject_seq,
          status: 'pending' as const,
          attempts: 0,
          next_attempt: created,
          lease_until: null,
          lease_token: null,
          created,
          completed: null,
          last_error: null,
        })),
      )
      deps.scheduled?.()
      const [dto] = await eventsWithDeliveries([event])
      return dto
    },
  }
}

export type WebhooksService = ReturnType<typeof createWebhooksService>
