import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readable } from 'node:stream'
import { AudioResponse, ErrorResponse, SpeechBody, SpeechJson, TimelineParams, TimelineResponse, VoicesResponse } from './speech.schemas.ts'
import type { SpeechService } from './speech.service.ts'
import { strictBodyCompiler } from '../../validation.ts'

export const speechRoutes: FastifyPluginAsyncTypebox<{ service: SpeechService }> = async (app, { service }) => {
  app.post(
    '/tts',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Speak a text',
        description:
          'Synthesises `text` and streams the audio (chunked) as it is produced. `X-TTS-Provider` names the provider that really spoke it (the local one when the online one is unreachable); ' +
          '`X-Synthesis-Id` names the synthesis, whose viseme timeline `GET /v1/tts/{synthesis_id}/visemes` gives once the audio is complete. ' +
          'With `"visemes": true` the answer is instead one JSON body: the whole audio as base64 and its viseme timeline.',
        body: SpeechBody,
        response: {
          200: {
            description: 'The audio (streamed), or with `visemes: true` the audio and its timeline as JSON.',
            headers: {
              'x-tts-provider': { type: 'string', description: 'the provider that really spoke' },
              'x-synthesis-id': { type: 'string', description: 'the id of this synthesis (binary answers)' },
            },
            content: {
              'audio/mpeg': { schema: AudioResponse },
              'audio/wav': { schema: AudioResponse },
              'application/json': { schema: SpeechJson },
            },
          },
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
      if (request.body.visemes === true) {
        const json = await service.synthesizeJson(request.body, controller.signal)
        reply.header('x-tts-provider', json.provider).header('cache-control', 'no-store').type('application/json')
        return json
      }
      const speech = await service.synthesize(request.body, controller.signal)
      reply.type(speech.contentType).header('x-tts-provider', speech.provider).header('x-synthesis-id', speech.synthesisId).header('cache-control', 'no-store')
      if (speech.length !== undefined) reply.header('content-length', speech.length)
      return reply.send(Readable.from(speech.chunks, { objectMode: false }))
    },
  )

  app.get(
    '/tts/:synthesis_id/visemes',
    {
      // The avatar's wording of a bad field (`synthesis_id must be …`), as for request bodies.
      validatorCompiler: strictBodyCompiler,
      schema: {
        tags: ['avatar'],
        summary: 'The viseme timeline of a recent synthesis',
        description:
          'The mouth shapes of the audio of a `POST /v1/tts` answer (its `X-Synthesis-Id`), kept for AVATAR_TTS_TIMELINE_TTL after the audio was sent, on every instance. ' +
          '404 for an unknown or expired id; 409 when the provider that spoke reports no phoneme timing (the online Edge voices).',
        params: TimelineParams,
        response: { 200: TimelineResponse, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse },
      },
    },
    async (request) => service.timeline(request.params.synthesis_id),
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
