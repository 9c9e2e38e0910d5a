import { installErrorHandling } from '../../core/errors/error-handler.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import type { PaymentsConfig } from './config.ts'
import { migrations } from './migrations/index.ts'

export const paymentsService: ServiceDefinition<PaymentsConfig> = {
  name: 'payments',
  migrations,
  plugin: () => async (app) => {
    // Payments routes live at the root (/apps, /merchants, …); their errors use Paylike's shapes:
    // a validation failure is an array of {field, message}, anything else {code, message}.
    installErrorHandling(
      app,
      (error) =>
        error.validation
          ? error.validation.map((problem) => ({ field: problem.field || problem.location, message: problem.message }))
          : { code: error.code, message: error.message },
      { notFound: false },
    )
  },
}
