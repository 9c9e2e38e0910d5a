export { healthRoutes } from './health.routes.ts'
export { createHealthService, type HealthService, TTS_STATUS_MAX_AGE_MS } from './health.service.ts'
