// The apps module: API clients and their keys (payments_apps).
export { appsRoutes } from './apps.routes.ts'
export { createAppsService, findApp, hashKey } from './apps.service.ts'
