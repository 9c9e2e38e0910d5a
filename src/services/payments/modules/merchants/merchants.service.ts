import { afterCommit } from '../../../../core/db/held-commit.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { PageRequest } from '../../../../core/http/pagination.ts'
import type { PaymentsContext } from '../../context.ts'
import { conflict, fieldError, fieldErrors, forbidden, notFound } from '../../http/errors.ts'
import type { MerchantRow, MerchantsTable } from '../../tables.ts'
import { findApp } from '../apps/index.ts'
import { convert } from '../../money/fx.ts'
import * as repo from './merchants.repository.ts'
import { type CreateMerchantInput, type Merchant, normalizeIban, type UpdateMerchantInput } from './merchants.schemas.ts'

/**
 * Default pricing of a new merchant (our own defaults, modelled on Paylike's published EU card
 * pricing): 1.35 % of each capture plus EUR 0.25, and EUR 15.00 per lost dispute. The EUR
 * amounts are converted once, at creation, into the funding currency (rounded up, no markup).
 */
const DEFAULT_PRICING = { ratePpm: 13_500, flat: { currency: 'EUR', amount: 25 }, dispute: { currency: 'EUR', amount: 1500 } } as const

function toMerchant(row: MerchantRow): Merchant {
  return {
    id: row.id,
    key: row.key,
    ...(row.name === null ? {} : { name: row.name }),
    currency: row.currency,
    test: row.test === 1,
    email: row.email,
    website: row.website,
    descriptor: row.descriptor,
    company: { country: row.company_country, ...(row.company_number === null ? {} : { number: row.company_number }) },
    bank: row.bank_iban === null ? {} : { iban: row.bank_iban },
    created: row.created,
    balance: row.balance,
    claim: { canCapture: true, canRefund: true, canVoid: true, canChargeCard: true, canSaveCard: true, canTransferToCard: false },
    pricing: {
      rate: row.fee_rate_ppm / 1_000_000,
      flat: { currency: row.currency, amount: row.fee_flat },
      dispute: { currency: row.currency, amount: row.dispute_fee },
    },
    tds: { mode: row.tds_mode },
  }
}

export function createMerchantsService(ctx: PaymentsContext) {
  const db = ctx.db
  const now = () => ctx.clock.now().toISOString()

  /**
   * The merchant if `appId` belongs to it (an app, or a merchant user signed in to the
   * dashboard): unknown (or malformed) id → 404, not a member → 403.
   */
  async function requireMerchant(appId: string, merchantId: string): Promise<MerchantRow> {
    const merchant = await repo.findMerchant(db, merchantId)
    if (!merchant) throw notFound('Merchant')
    if (!(await repo.isMemberOfMerchant(db, merchantId, appId))) throw forbidden('This app is not a member of the merchant')
    return merchant
  }

  return {
    requireMerchant,

    async create(appId: string, input: CreateMerchantInput): Promise<Merchant> {
      // The schema's `iban` format has checked it, with every other field.
      const iban = input.bank?.iban ? (normalizeIban(input.bank.iban) ?? null) : null
      const created = now()
      const fee = (money: { currency: string; amount: number }) =>
        convert(ctx.fx, money.amount, money.currency, input.currency, { markupPpm: 0, direction: 'debit' })
      const row: MerchantsTable = {
        id: ctx.ids.timeOrdered(),
        key: ctx.ids.uuid(),
        name: input.name ?? null,
        currency: input.currency,
        test: input.test ? 1 : 0,
        email: input.email,
        website: input.website,
        descriptor: input.descriptor,
        company_country: input.company.country,
        company_number: input.company.number ?? null,
        bank_iban: iban,
        fee_rate_ppm: DEFAULT_PRICING.ratePpm,
        fee_flat: fee(DEFAULT_PRICING.flat),
        dispute_fee: fee(DEFAULT_PRICING.dispute),
        tds_mode: 'attempt',
        created,
      }
      await withTransaction(ctx.database, async (trx) => {
        await repo.insertMerchant(trx, row)
        await repo.addAppToMerchant(trx, row.id, appId, created)
      })
      return toMerchant({ ...row, balance: 0 })
    },

    async get(appId: string, merchantId: string): Promise<Merchant> {
      return toMerchant(await requireMerchant(appId, merchantId))
    },

    async update(appId: string, merchantId: string, input: UpdateMerchantInput): Promise<void> {
      await requireMerchant(appId, merchantId)
      const changes: { name?: string; email?: string; descriptor?: string } = {}
      if (input.name !== undefined) changes.name = input.name
      if (input.email !== undefined) changes.email = input.email
      if (input.descriptor !== undefined) changes.descriptor = input.descriptor
      await repo.updateMerchant(db, merchantId, changes)
    },

    /** An app lists its own merchants only; another identity's list is forbidden. */
    async listOfIdentity(appId: string, identityId: string, page: PageRequest, filter: { test?: boolean } = {}): Promise<Merchant[]> {
      if (identityId !== appId) {
        if (!(await findApp(db, identityId))) throw notFound('Identity')
        throw forbidden('An app can list only its own merchants')
      }
      return (await repo.listMerchantsOfMember(db, appId, page, filter)).map(toMerchant)
    },

    async inviteUser(appId: string, merchantId: string, rawEmail: string): Promise<{ isMember: boolean }> {
      const merchant = await requireMerchant(appId, merchantId)
      const email = rawEmail.trim().toLowerCase()
      const created = now()
      const added = await withTransaction(ctx.database, async (trx) => {
        await repo.insertUser(trx, { id: ctx.ids.timeOrdered(), email, created })
        const user = await repo.findUserByEmail(trx, email)
        if (!user) throw conflict('The user changed concurrently; try again')
        return repo.addUserToMerchant(trx, merchantId, user.id, created)
      })
      if (!added) return { isMember: true }
      const message = {
        to: email,
        subject: `You are invited to ${merchant.name ?? merchant.descriptor ?? 'a merchant'} on Triad Payments`,
        text: [
          `You have been given access to the merchant account "${merchant.name ?? merchant.id}" (${merchant.id}).`,
          'Every member has full access to the merchant, including inviting and revoking others.',
          `Merchant website: ${merchant.website}`,
        ].join('\n\n'),
      }
      // Sent once the membership is committed (a keyed request commits with its answer).
      await afterCommit(db, async () => {
        try {
          await ctx.mailer.send(message)
        } catch (error) {
          // The membership stands; a failed delivery is an operator's problem, not the caller's.
          ctx.log.error({ err: error, to: email }, 'invitation e-mail could not be sent')
        }
      })
      return { isMember: false }
    },

    async revokeUser(appId: string, merchantId: string, userId: string): Promise<void> {
      await requireMerchant(appId, merchantId)
      if (!(await repo.removeUserFromMerchant(db, merchantId, userId))) throw notFound('User')
    },

    async listUsers(appId: string, merchantId: string, page: PageRequest) {
      await requireMerchant(appId, merchantId)
      return repo.listUsersOfMerchant(db, merchantId, page)
    },

    async addApp(appId: string, merchantId: string, otherAppId: string): Promise<void> {
      await requireMerchant(appId, merchantId)
      if (!(await findApp(db, otherAppId))) throw fieldError('appId', 'no app has this id')
      await repo.addAppToMerchant(db, merchantId, otherAppId, now())
    },

    async revokeApp(appId: string, merchantId: string, otherAppId: string): Promise<void> {
      await requireMerchant(appId, merchantId)
      await withTransaction(ctx.database, async (trx) => {
        if (!(await repo.isAppOfMerchant(trx, merchantId, otherAppId))) throw notFound('App')
        if ((await repo.countAppsOfMerchant(trx, merchantId)) <= 1) {
          throw fieldErrors([{ field: 'appId', message: 'is the last app of the merchant; add another before revoking it' }])
        }
        await repo.removeAppFromMerchant(trx, merchantId, otherAppId)
      })
    },

    async listApps(appId: string, merchantId: string, page: PageRequest) {
      await requireMerchant(appId, merchantId)
      return (await repo.listAppsOfMerchant(db, merchantId, page)).map((row) => ({
        id: row.id,
        ...(row.name === null ? {} : { name: row.name }),
        created: row.created,
      }))
    },
  }
}

export type MerchantsService = ReturnType<typeof createMerchantsService>
