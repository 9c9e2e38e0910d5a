export { HANDOFF_COOKIE, handoffCookiePath, loginRoutes } from './login.routes.ts'
export { createLoginService, type HandoffExchange } from './login.service.ts'
