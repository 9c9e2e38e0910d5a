export { personalTokensRoutes } from './personal-tokens.routes.ts'
export { toTokenResponse } from './personal-tokens.schemas.ts'
export {
  createPersonalTokensService,
  isPersonalToken,
  type PersonalTokenCheck,
  type PersonalTokensService,
  type TokenScope,
} from './personal-tokens.service.ts'
export type { PersonalTokensTables } from './personal-tokens.table.ts'
