import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { coreError } from '../../../../core/errors/codes.ts'

const ASSET_TYPES: Record<string, string> = {
  'avatar.css': 'text/css; charset=utf-8',
  'avatar.js': 'text/javascript; charset=utf-8',
  'opus-encoder.js': 'text/javascript; charset=utf-8',
  'recorder-worklet.js': 'text/javascript; charset=utf-8',
  'voice.js': 'text/javascript; charset=utf-8',
  'voice-playback.js': 'text/javascript; charset=utf-8',
  'wav-pcm.js': 'text/javascript; charset=utf-8',
}

// Everything the page needs comes from here: no CDN, no inline script, no third party.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

interface Asset {
  body: Buffer
  type: string
  etag: string
}

function load(name: string, type: string): Asset {
  const body = readFileSync(new URL(`./assets/${name}`, import.meta.url))
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
}

/** GET /avatar (the page) and GET /avatar/assets/{name}, read once at start. */
export const pageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const page = load('avatar.html', 'text/html; charset=utf-8')
  const assets = new Map(Object.entries(ASSET_TYPES).map(([name, type]) => [name, load(name, type)]))

  app.get(
    '/avatar',
    {
      schema: {
        tags: ['avatar'],
        summary: 'The avatar page',
        description: 'A page where a person talks to the avatar: streamed chat, speech, microphone, conversations.',
        produces: ['text/html'],
        response: { 200: Type.Unsafe<Buffer>({ type: 'string', description: 'HTML' }), 304: Type.Null({ description: 'Not modified (ETag)' }) },
      },
    },
    async (request, reply) => {
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache')
      if (request.headers['if-none-match'] === page.etag) return reply.code(304).send(null)
      return reply.type(page.type).header('etag', page.etag).send(page.body)
    },
  )

  app.get(
    '/avatar/assets/:name',
    {
      schema: {
        tags: ['avatar'],
        summary: 'A file of the avatar page',
        params: Type.Object({ name: Type.String() }),
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', description: 'CSS or JavaScript' }),
          304: Type.Null({ description: 'Not modified (ETag)' }),
          404: Type.Unknown({ description: 'No such file (the server’s error body)' }),
        },
      },
    },
    async (request, reply) => {
      const asset = assets.get(request.params.name)
      if (!asset) throw coreError('not_found', `No asset ${request.params.name}`)
      reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').header('etag', asset.etag)
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send(null)
      return reply.type(asset.type).send(asset.body)
    },
  )
}
