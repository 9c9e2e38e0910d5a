/**
 * The one error type services throw. `code` is stable and machine-readable; `status` is the
 * HTTP status it maps to; `message` is safe to show to the client; `cause` holds internals
 * that are logged, never sent.
 */
export interface AppErrorOptions {
  status: number
  details?: unknown
  headers?: Record<string, string>
  cause?: unknown
}

export class AppError extends Error {
  code: string
  status: number
  details?: unknown
  headers?: Record<string, string>

  constructor(code: string, message: string, options: AppErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.status = options.status
    this.details = options.details
    this.headers = options.headers
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError
}
