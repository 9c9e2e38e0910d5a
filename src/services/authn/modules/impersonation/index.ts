// The audit trail grew beyond acting on behalf of someone (issue 19): it lives in the audit module.
export type { LoginAsEntry } from '../audit/index.ts'
export { authzRoutes } from './authz.routes.ts'
