export { createThrottleService, type ThrottleService } from './throttle.service.ts'
export type { ThrottleTables } from './throttle.table.ts'
