export { oidcRoutes } from './oidc.routes.ts'
export { createOidcService, OIDC_METHOD } from './oidc.service.ts'
export type { OidcTables } from './oidc.table.ts'
