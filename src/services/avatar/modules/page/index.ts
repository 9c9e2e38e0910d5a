export { pageRoutes } from './page.routes.ts'
