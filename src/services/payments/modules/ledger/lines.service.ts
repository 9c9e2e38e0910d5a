import type { PageRequest } from '../../../../core/http/pagination.ts'
import type { PaymentsContext } from '../../context.ts'
import { notFound } from '../../http/errors.ts'
import type { LineRow } from '../../tables.ts'
import type { MerchantsService } from '../merchants/index.ts'
import { findLine, listLinesOfMerchant } from './ledger.repository.ts'
import type { LineDto } from './lines.schemas.ts'

function toLine(row: LineRow): LineDto {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    test: row.test === 1,
    created: row.created,
    balance: row.balance,
    fee: row.fee,
    ...(row.description === null ? {} : { description: row.description }),
    ...(row.transaction_id === null ? {} : { transactionId: row.transaction_id }),
    ...(row.amount_currency === null || row.amount === null ? {} : { amount: { currency: row.amount_currency, amount: row.amount } }),
    [row.kind]: true,
  }
}

export function createLinesService(ctx: PaymentsContext, merchants: MerchantsService) {
  return {
    async list(appId: string, merchantId: string, page: PageRequest): Promise<LineDto[]> {
      await merchants.requireMerchant(appId, merchantId)
      const rows = await listLinesOfMerchant(ctx.db, merchantId, page)
      return rows.map(toLine)
    },

    async get(appId: string, lineId: string): Promise<LineDto> {
      const row = await findLine(ctx.db, lineId)
      if (!row) throw notFound('Line')
      await merchants.requireMerchant(appId, row.merchant_id)
      return toLine(row)
    },
  }
}

export type LinesService = ReturnType<typeof createLinesService>
