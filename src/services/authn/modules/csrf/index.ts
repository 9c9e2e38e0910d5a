export { csrfRoutes } from './csrf.routes.ts'
export { installCsrf, rotateCsrf } from './csrf.ts'
