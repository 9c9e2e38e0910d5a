// The apps module: API clients and their keys (payments_apps).
export { appsRoutes } from './apps.routes.ts'
export { type AppsService, createAppsService, findApp, hashKey } from './apps.service.ts'
export type { AppRow } from './apps.repository.ts'
