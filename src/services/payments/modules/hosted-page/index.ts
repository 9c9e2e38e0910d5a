// The hosted payment page (/pos).
export { hostedPageRoutes } from './hosted-page.routes.ts'
