export { type Actor, actorFor, type AuditLog, type AuditLogger, type ChangeEntry, type LoginAsEntry, requestLogAudit } from './audit-log.ts'
