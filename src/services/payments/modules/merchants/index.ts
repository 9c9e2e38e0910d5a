// Merchants, their apps and users, invitations (payments_merchants and their join tables).
export { type ClientMerchant, createMerchantDirectory } from './merchant-directory.ts'
export { merchantsRoutes } from './merchants.routes.ts'
export { DESCRIPTOR_PATTERN, FUNDING_CURRENCIES, PAYMENTS_FORMATS } from './merchants.schemas.ts'
export { createMerchantsService, type MerchantsService } from './merchants.service.ts'
