// Webhooks: endpoints merchants register, the event outbox every change writes to (through the
// EventSink port, events/event-sink.port.ts), and the worker that delivers it, signed.
export { createDeliveryWorker } from './delivery-worker.ts'
export { createEventRecorder } from './event-recorder.ts'
export { createSecretBox, type SecretBox } from './webhooks.keys.ts'
export { webhooksRoutes } from './webhooks.routes.ts'
export { createWebhooksService, type WebhooksService } from './webhooks.service.ts'
