export { statusRoutes } from './status.routes.ts'
