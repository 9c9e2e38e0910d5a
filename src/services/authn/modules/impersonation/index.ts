export { requestLogAudit, type AuditLog, type LoginAsEntry } from './audit-log.ts'
export { authzRoutes } from './authz.routes.ts'
