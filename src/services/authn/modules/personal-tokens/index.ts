export {
  createPersonalTokensService,
  isPersonalToken,
  type PersonalTokenCheck,
  type PersonalTokensService,
  TOKEN_SCOPES,
  type TokenScope,
} from './personal-tokens.service.ts'
export type { PersonalTokenRow, PersonalTokensTables } from './personal-tokens.table.ts'
