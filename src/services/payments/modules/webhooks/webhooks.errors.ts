import { conflict, fieldError, notFound } from '../../http/errors.ts'

/** The webhooks module's refusals, one factory each; the status comes with the code (http/errors.ts). */
export const webhookErrors = {
  notFound: () => notFound('Webhook'),
  eventNotFound: () => notFound('Event'),
  badUrl: (message: string) => fieldError('url', message),
  disabled: () => conflict('The webhook is disabled; enable it first'),
  noEndpoint: () => conflict('No enabled webhook takes this event'),
  rotationRaced: () => conflict('The secret was rotated by another request at the same time; fetch the webhook and rotate again if needed'),
}
