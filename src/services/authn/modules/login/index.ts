export { HANDOFF_COOKIE, handoffCookiePath, loginClient, loginRoutes, sendToken } from './login.routes.ts'
export { createLoginService, type LoginService } from './login.service.ts'
