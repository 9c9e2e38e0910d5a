import { installErrorHandling } from '../../core/errors/error-handler.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import type { AvatarConfig } from './config.ts'
import { migrations } from './migrations/index.ts'

export const avatarService: ServiceDefinition<AvatarConfig> = {
  name: 'avatar',
  migrations,
  plugin: () => async (app) => {
    await app.register(
      async (scope) => {
        // The avatar API's errors are always `{detail: string}`.
        installErrorHandling(scope, (error) => ({ detail: error.message }))
      },
      { prefix: '/v1' },
    )
  },
}
