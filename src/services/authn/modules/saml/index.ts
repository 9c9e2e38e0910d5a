export { samlRoutes } from './saml.routes.ts'
export { createSamlService, SAML_METHOD, SAML_PATH } from './saml.service.ts'
export type { SamlTables } from './saml.table.ts'
export { loadSpCredentials } from './sp-credentials.ts'
