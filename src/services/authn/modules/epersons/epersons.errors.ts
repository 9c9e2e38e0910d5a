import type { AppError } from '../../../../core/errors/app-error.ts'
import { authnError } from '../../errors.ts'

export function emailTaken(email: string): AppError {
  return authnError('email_taken', `An eperson with e-mail ${email} already exists`)
}

export function invalidEmail(email: string): AppError {
  return authnError('invalid_email', `Not an e-mail address: ${JSON.stringify(email)}`)
}

export function weakPassword(): AppError {
  return authnError('weak_password', 'The password must be between 8 and 1024 characters long')
}

export function epersonNotFound(what: string): AppError {
  return authnError('not_found', `No eperson ${what}`)
}

export function groupNotFound(what: string): AppError {
  return authnError('not_found', `No group ${what}`)
}
