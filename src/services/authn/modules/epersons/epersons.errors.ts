import { AppError } from '../../../../core/errors/app-error.ts'

export function emailTaken(email: string): AppError {
  return new AppError('email_taken', `An eperson with e-mail ${email} already exists`, { status: 422 })
}

export function invalidEmail(email: string): AppError {
  return new AppError('invalid_email', `Not an e-mail address: ${JSON.stringify(email)}`, { status: 422 })
}

export function weakPassword(): AppError {
  return new AppError('weak_password', 'The password must be between 8 and 1024 characters long', { status: 422 })
}

export function epersonNotFound(what: string): AppError {
  return new AppError('not_found', `No eperson ${what}`, { status: 404 })
}

export function groupNotFound(what: string): AppError {
  return new AppError('not_found', `No group ${what}`, { status: 404 })
}
