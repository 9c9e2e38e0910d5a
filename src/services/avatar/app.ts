import { installErrorHandling } from '../../core/errors/error-handler.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import type { AvatarConfig } from './config.ts'
import { formatAvatarError } from './errors.ts'
import { migrations } from './migrations/index.ts'
import { type ConversationProviders, createConversation } from './modules/chat/index.ts'
import { type SpeechProviders, speechPlugin } from './modules/speech/index.ts'
import { transcriptionPlugin } from './modules/transcription/index.ts'
import { pageRoutes } from './modules/page/index.ts'

export const avatarService: ServiceDefinition<AvatarConfig, SpeechProviders & ConversationProviders> = {
  name: 'avatar',
  migrations,
  plugin: (deps) => async (app) => {
    const conversation = createConversation({ ...deps, config: deps.config.chat })
    await app.register(
      async (scope) => {
        // The avatar API's errors are always `{detail: string}`.
        installErrorHandling(scope, formatAvatarError)
        await scope.register(conversation.routes)
        await scope.register(speechPlugin({ config: deps.config.speech, tts: deps.tts, clock: deps.clock }))
        await scope.register(transcriptionPlugin({ config: deps.config.transcription, asr: deps.asr }))
      },
      { prefix: '/v1' },
    )
    await app.register(async (scope) => {
      installErrorHandling(scope, formatAvatarError, { notFound: false })
      await scope.register(conversation.socketRoutes)
      await scope.register(pageRoutes)
    })
  },
}
