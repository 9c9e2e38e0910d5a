// The merchant dashboard (/dashboard): the page, its assets and its sign-in sessions.
export { dashboardRoutes } from './dashboard.routes.ts'
export { createDashboardService } from './dashboard.service.ts'
export { createSignInLinks } from './sign-in-links.ts'
export { createDashboardPasskeys } from './passkeys.service.ts'
