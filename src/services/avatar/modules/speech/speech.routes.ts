import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readable } from 'node:stream'
import { AudioResponse, ErrorResponse, SpeechBody, VoicesResponse } from './speech.schemas.ts'
import type { SpeechService } from './speech.service.ts'

export const speechRoutes: FastifyPluginAsyncTypebox<{ service: SpeechService }> = async (app, { service }) => {
  app.post(
    '/tts',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Speak a text',
        description:
          'Synthesises `text` and streams the audio (chunked) as it is produced. `X-TTS-Provider` names the provider that really spoke it (the local one when the online one is unreachable).',
        body: SpeechBody,
        response: {
          200: AudioResponse,
          400: ErrorResponse,
          502: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      // Stop synthesising when the client goes away before the audio is complete.
      const controller = new AbortController()
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) controller.abort()
      })
      const speech = await service.synthesize(request.body, controller.signal)
      reply.type(speech.contentType).header('x-tts-provider', speech.provider).header('cache-control', 'no-store')
      if (speech.length !== undefined) reply.header('content-length', speech.length)
      return reply.send(Readable.from(speech.chunks, { objectMode: false }))
    },
  )

  app.get(
    '/tts/voices',
    {
      schema: {
        tags: ['avatar'],
        summary: 'List the voices',
        description: 'The four voices and the provider that synthesis really uses now.',
        response: { 200: VoicesResponse },
      },
    },
    async () => service.voices(),
  )
}
