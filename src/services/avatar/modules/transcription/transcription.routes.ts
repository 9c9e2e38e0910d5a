import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { coreError } from '../../../../core/errors/codes.ts'
import { ErrorResponse, RecognitionStatusResponse, TranscriptionResponse } from './transcription.schemas.ts'
import { MAX_UPLOAD_BYTES, type TranscriptionService, type Upload } from './transcription.service.ts'

interface MultipartForm {
  upload?: Upload
  language?: string
}

/** Reads the form; every way a multipart body can be wrong becomes a 400 with a reason. */
async function readForm(request: FastifyRequest): Promise<MultipartForm> {
  if (!request.isMultipart()) throw coreError('validation_failed', 'expected a multipart/form-data body with the audio in the field "file"')
  const form: MultipartForm = {}
  try {
    for await (const part of request.parts({ limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 1024 } })) {
      if (part.type === 'file') {
        const buffer = await part.toBuffer()
        if (part.fieldname === 'file') form.upload = { buffer, filename: part.filename, mimeType: part.mimetype }
      } else if (part.fieldname === 'language' && typeof part.value === 'string') {
        form.language = part.value
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw coreError('validation_failed', `file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`)
    if (code === 'FST_FILES_LIMIT') throw coreError('validation_failed', 'send one file, in the field "file"')
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw coreError('validation_failed', 'too many form fields')
    throw coreError('validation_failed', `the multipart/form-data body is malformed: ${(error as Error).message}`)
  }
  return form
}

export const transcriptionRoutes: FastifyPluginAsyncTypebox<{ service: TranscriptionService }> = async (app, { service }) => {
  app.post(
    '/asr',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Transcribe speech',
        description:
          'multipart/form-data with `file` (wav, mp3, ogg/opus, webm, m4a or flac; at most 25 MB) and an optional `language` (`en`, `zh`…). `duration` is in seconds.',
        consumes: ['multipart/form-data'],
        response: {
          200: TranscriptionResponse,
          400: ErrorResponse,
          415: ErrorResponse,
          502: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request) => {
      service.assertAvailable()
      const controller = new AbortController()
      request.raw.on('close', () => {
        if (!request.raw.complete) controller.abort()
      })
      const form = await readForm(request)
      return service.transcribe(form.upload, form.language, controller.signal)
    },
  )

  app.get(
    '/asr/status',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Whether speech recognition is available',
        response: { 200: RecognitionStatusResponse },
      },
    },
    async () => service.status(),
  )
}
