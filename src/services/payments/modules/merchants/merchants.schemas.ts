import { type Static, Type } from '@sinclair/typebox'
import { identifierSchema } from '../../../../core/http/identifiers.ts'
import countries from 'country-list/data.json' with { type: 'json' }
import { isValidIBAN } from 'ibantools'

/** Paylike's fundable currencies (paylike/currencies, `funding: true`). */
export const FUNDING_CURRENCIES = ['BGN', 'CHF', 'CZK', 'DKK', 'EUR', 'GBP', 'HUF', 'NOK', 'PLN', 'RON', 'SEK', 'USD'] as const

/** ISO 3166-1 alpha-2 codes (the `country-list` package's data). */
const COUNTRY_CODES: string[] = (countries as Array<{ code: string }>).map((country) => country.code).sort()

/** paylike/descriptor: printable ASCII, at most 22 characters. */
export const DESCRIPTOR_PATTERN = '^[\\x20-\\x7E]{0,22}$'

/** IBAN in electronic form (no spaces, upper case), checked by country length and mod-97 checksum. */
export function normalizeIban(value: string): string | undefined {
  const compact = value.replace(/[\s-]/g, '').toUpperCase()
  return isValidIBAN(compact) ? compact : undefined
}

/** The string formats of the payments schemas, checked by the validator with every other field. */
export const PAYMENTS_FORMATS = {
  iban: (value: string) => value === '' || normalizeIban(value) !== undefined,
}

const Descriptor = Type.String({ pattern: DESCRIPTOR_PATTERN, description: 'text on the bank statement: printable ASCII, at most 22 characters' })
const Email = Type.String({ format: 'email', maxLength: 254 })

export const CreateMerchantBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    currency: Type.Union(
      FUNDING_CURRENCIES.map((code) => Type.Literal(code)),
      { description: 'funding currency (only fundable currencies)' },
    ),
    test: Type.Optional(Type.Boolean({ default: false, description: 'a test account' })),
    email: Email,
    website: Type.String({
      minLength: 4,
      maxLength: 500,
      pattern: '^(https?://)?[^\\s/.]+(\\.[^\\s/.]+)+(/\\S*)?$',
      description: 'website with the implementation',
    }),
    descriptor: Descriptor,
    company: Type.Object(
      {
        country: Type.String({ enum: COUNTRY_CODES, description: 'ISO 3166-1 alpha-2' }),
        number: Type.Optional(Type.String({ maxLength: 100 })),
      },
      { default: {} },
    ),
    bank: Type.Optional(
      Type.Object({
        iban: Type.Optional(Type.String({ maxLength: 42, format: 'iban', description: 'IBAN; checked by its mod-97 checksum' })),
      }),
    ),
  },
  { additionalProperties: true },
)
export type CreateMerchantInput = Static<typeof CreateMerchantBody>

export const UpdateMerchantBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    email: Type.Optional(Email),
    descriptor: Type.Optional(Descriptor),
  },
  { additionalProperties: true, description: 'only name, email and descriptor change; other fields are immutable and ignored' },
)
export type UpdateMerchantInput = Static<typeof UpdateMerchantBody>

const Money = Type.Object({ currency: Type.String(), amount: Type.Integer() })

export const MerchantSchema = Type.Object({
  id: Type.String(),
  key: Type.String({ description: 'public key for transactions and payment links' }),
  name: Type.Optional(Type.String()),
  currency: Type.String(),
  test: Type.Boolean(),
  email: Type.String(),
  website: Type.String(),
  descriptor: Type.String(),
  company: Type.Object({ country: Type.String(), number: Type.Optional(Type.String()) }),
  bank: Type.Object({ iban: Type.Optional(Type.String()) }),
  created: Type.String({ format: 'date-time' }),
  balance: Type.Integer({ description: "minor units of the funding currency; the sum of the merchant's lines" }),
  claim: Type.Object({
    canCapture: Type.Boolean(),
    canRefund: Type.Boolean(),
    canVoid: Type.Boolean(),
    canChargeCard: Type.Boolean(),
    canSaveCard: Type.Boolean(),
    canTransferToCard: Type.Boolean(),
  }),
  pricing: Type.Object({
    rate: Type.Number({ description: 'fee rate as a fraction of each capture (0.0135 is 1.35 %)' }),
    flat: Money,
    dispute: Money,
  }),
  tds: Type.Object({ mode: Type.String() }),
})
export type Merchant = Static<typeof MerchantSchema>

export const MerchantResponse = Type.Object({ merchant: MerchantSchema })
export const MerchantParams = Type.Object({ merchantId: identifierSchema() })
export const IdentityParams = Type.Object({ appId: identifierSchema() })

export const InviteUserBody = Type.Object({ email: Email }, { additionalProperties: true })
export const InviteUserResponse = Type.Object({ isMember: Type.Boolean({ description: 'true when the person already was a member (no e-mail is sent then)' }) })
export const MerchantUserParams = Type.Object({ merchantId: identifierSchema(), userId: identifierSchema() })
export const MerchantUserSchema = Type.Object({ id: Type.String(), email: Type.String(), created: Type.String({ format: 'date-time' }) })

export const AddAppBody = Type.Object({ appId: identifierSchema() }, { additionalProperties: true })
export const MerchantAppParams = Type.Object({ merchantId: identifierSchema(), appId: identifierSchema() })
export const MerchantAppSchema = Type.Object({ id: Type.String(), name: Type.Optional(Type.String()), created: Type.String({ format: 'date-time' }) })
