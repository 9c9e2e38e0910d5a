export { createHandoffService, type HandoffService } from './handoffs.service.ts'
export type { HandoffsTables } from './handoffs.table.ts'
