import type { Kysely, Transaction } from 'kysely'
import type { WriteBatch } from '../../core/db/write-batch.ts'

// Row types of every payments table (see migrations/). One file: the modules share rows
// (a capture touches transactions, trail, lines and merchants in one database transaction).

export interface AppsTable {
  id: string
  name: string | null
  key_hash: string
  created: string
}

export interface MerchantsTable {
  id: string
  key: string
  name: string | null
  currency: string
  test: number
  email: string
  website: string
  descriptor: string
  company_country: string
  company_number: string | null
  bank_iban: string | null
  fee_rate_ppm: number
  fee_flat: number
  dispute_fee: number
  tds_mode: string
  created: string
}

/** A merchant's balance is the sum of its shards (see migration 202611220130). */
interface BalanceShardsTable {
  merchant_id: string
  shard: number
  balance: number
}

interface MerchantAppsTable {
  merchant_id: string
  app_id: string
  created: string
}

interface UsersTable {
  id: string
  email: string
  created: string
}

interface MerchantUsersTable {
  merchant_id: string
  user_id: string
  created: string
}

interface OutboxTable {
  id: string
  recipient: string
  subject: string
  body: string
  created: string
}

interface TransactionsTable {
  id: string
  merchant_id: string
  test: number
  created: string
  currency: string
  amount: number
  descriptor: string
  captured_amount: number
  refunded_amount: number
  voided_amount: number
  disputed_amount: number
  /** Of the disputed amount, what was lost (returned to the cardholder): no longer refundable. */
  lost_amount: number
  card_bin: string | null
  card_last4: string | null
  card_expiry: string | null
  card_scheme: string | null
  card_code_present: number
  card_ref: string | null
  custom: string | null
  text: string | null
  tds: string | null
  recurring: number
  successful: number
  error: string | null
  source_transaction_id: string | null
}

export type LineKind = 'capture' | 'refund' | 'dispute'

interface LinesTable {
  id: string
  merchant_id: string
  test: number
  created: string
  kind: LineKind
  balance: number
  fee: number
  description: string | null
  transaction_id: string | null
  amount_currency: string | null
  amount: number | null
}

export type TrailKind = 'capture' | 'refund' | 'void' | 'dispute'

interface TrailTable {
  id: string
  transaction_id: string
  kind: TrailKind
  created: string
  amount: number
  balance: number
  fee_flat: number
  fee_rate: number
  descriptor: string | null
  line_id: string | null
  dispute_id: string | null
  dispute_outcome: 'won' | 'lost' | null
  /** Who made the entry (ActorColumns); null for the acquirer's (disputes) and for entries older than issue 30. */
  actor_type: ActorColumns['actor_type']
  actor_id: string | null
  actor_email: string | null
}

/** Who did something: an app (by its key) or a merchant user (signed in to the dashboard). */
export interface ActorColumns {
  actor_type: 'app' | 'user' | null
  actor_id: string | null
  /** A user's e-mail when they acted (kept, so the audit still reads after the user is gone). */
  actor_email: string | null
}

export interface CardsTable {
  id: string
  merchant_id: string
  transaction_id: string
  created: string
  bin: string | null
  last4: string | null
  expiry: string | null
  scheme: string | null
  card_ref: string | null
  notes: string | null
}

export interface DisputesTable {
  id: string
  merchant_id: string
  transaction_id: string
  created: string
  amount: number
  reason_code: number
  due: string
  outcome: 'won' | 'lost' | null
  decided: string | null
}

export interface FraudsTable {
  id: string
  merchant_id: string
  transaction_id: string
  created: string
  reported: string | null
  reason: number | null
}

interface IdempotencyTable {
  app_id: string
  key: string
  fingerprint: string
  status: number | null
  content_type: string | null
  body: string | null
  created: string
}

type SandboxCardStatus = 'valid' | 'invalid' | 'expired' | 'disabled' | 'lost'

export interface SandboxCardsTable {
  card_ref: string
  status: SandboxCardStatus
  balance_currency: string | null
  balance: number | null
  limit_currency: string | null
  limit_amount: number | null
  updated: string
}

type WebhookEndpointStatus = 'enabled' | 'disabled'

export interface WebhookEndpointsTable {
  id: string
  merchant_id: string
  url: string
  /** JSON array of event types. */
  events: string
  description: string | null
  /** The signing secret, AES-256-GCM sealed under the webhook key (`v2.<kid>.…`), the endpoint id as AAD. */
  secret_sealed: string
  /** The secret a rotation replaced, sealed the same way; deliveries carry its signature too until `previous_secret_expires`. */
  previous_secret_sealed: string | null
  previous_secret_expires: string | null
  created: string
  status: WebhookEndpointStatus
  disabled_reason: string | null
  disabled_at: string | null
  /** The first failed attempt since the last delivered one; null while healthy. */
  failing_since: string | null
  /** Set when the merchant removed it (kept so the events list still names it). */
  deleted: string | null
}

export interface EventsTable {
  id: string
  merchant_id: string
  type: string
  subject_id: string
  /** 1, 2, … per subject: the order of delivery. */
  subject_seq: number
  created: string
  /** The event's `data`, JSON. */
  data: string
  actor_type: ActorColumns['actor_type']
  actor_id: string | null
  actor_email: string | null
}

type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled'

export interface EventDeliveriesTable {
  id: string
  event_id: string
  endpoint_id: string
  subject_id: string
  subject_seq: number
  status: DeliveryStatus
  attempts: number
  next_attempt: string
  lease_until: string | null
  lease_token: string | null
  created: string
  completed: string | null
  last_error: string | null
}

export interface DeliveryAttemptsTable {
  id: string
  delivery_id: string
  event_id: string
  endpoint_id: string
  started: string
  latency_ms: number
  succeeded: number
  response_status: number | null
  error: string | null
}

/** A signed-in dashboard browser: the SHA-256 of its cookie's token, and the app it acts as. */
export interface DashboardSessionsTable {
  token_hash: string
  app_id: string
  created: string
  expires: string
}

/** A one-time dashboard sign-in link e-mailed to a merchant user: the SHA-256 of its token. */
export interface DashboardLinksTable {
  token_hash: string
  user_id: string
  created: string
  expires: string
  /** When the link was followed; a used link never signs in again. */
  used: string | null
}

/** A browser signed in to the dashboard as a merchant user. */
export interface DashboardUserSessionsTable {
  token_hash: string
  user_id: string
  created: string
  expires: string
}

/** A merchant user's passkey (WebAuthn): the credential id and COSE public key, base64url. */
export interface DashboardPasskeysTable {
  id: string
  user_id: string
  name: string
  public_key: string
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number
  /** JSON array of transports, handed back to browsers as hints. */
  transports: string
  created: string
  last_used: string | null
}

/** The challenge of one passkey ceremony (SHA-256), until used once or expired. */
export interface DashboardChallengesTable {
  challenge_hash: string
  purpose: 'registration' | 'login'
  /** Whose registration; null for a login, where the passkey names the user. */
  user_id: string | null
  expires: string
}

export interface PaymentsTables {
  payments_apps: AppsTable
  payments_merchants: MerchantsTable
  payments_balance_shards: BalanceShardsTable
  payments_merchant_apps: MerchantAppsTable
  payments_users: UsersTable
  payments_merchant_users: MerchantUsersTable
  payments_outbox: OutboxTable
  payments_transactions: TransactionsTable
  payments_lines: LinesTable
  payments_trail: TrailTable
  payments_cards: CardsTable
  payments_disputes: DisputesTable
  payments_frauds: FraudsTable
  payments_idempotency: IdempotencyTable
  payments_sandbox_cards: SandboxCardsTable
  payments_webhook_endpoints: WebhookEndpointsTable
  payments_events: EventsTable
  payments_event_deliveries: EventDeliveriesTable
  payments_delivery_attempts: DeliveryAttemptsTable
  payments_dashboard_sessions: DashboardSessionsTable
  payments_dashboard_links: DashboardLinksTable
  payments_dashboard_user_sessions: DashboardUserSessionsTable
  payments_dashboard_passkeys: DashboardPasskeysTable
  payments_dashboard_challenges: DashboardChallengesTable
}

/** The database or an open transaction: repositories take either. */
export type PaymentsDb = Kysely<PaymentsTables> | Transaction<PaymentsTables>
/** Where a write whose result nobody reads may go: a database, a transaction, or a transaction's write batch. */
export type PaymentsWrites = PaymentsDb | WriteBatch<PaymentsTables>

export type TransactionRow = TransactionsTable
/** A merchant as read: its row plus the balance summed from its shards. */
export type MerchantRow = MerchantsTable & { balance: number }
export type TrailRow = TrailTable
export type LineRow = LinesTable
