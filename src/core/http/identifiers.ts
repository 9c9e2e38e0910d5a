import { type StringOptions, Type } from '@sinclair/typebox'

/**
 * The longest identifier any route takes, in a path or in a body, and the router's limit on a
 * path parameter (Fastify's `maxParamLength`). One number for both, so an id a client could
 * create (an avatar session id is the client's choice) can always be read and deleted again:
 * a longer one is refused everywhere, the same way.
 */
export const MAX_IDENTIFIER_LENGTH = 128

/** A string identifier: 1 to MAX_IDENTIFIER_LENGTH characters, narrowed further by `options`. */
export function identifierSchema(options: StringOptions = {}) {
  return Type.String({ minLength: 1, ...options, maxLength: MAX_IDENTIFIER_LENGTH })
}
