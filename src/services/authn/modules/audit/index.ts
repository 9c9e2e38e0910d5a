export { type Actor, actorFor, type AuditLog, type ChangeEntry, type LoginAsEntry, requestLogAudit } from './audit-log.ts'
