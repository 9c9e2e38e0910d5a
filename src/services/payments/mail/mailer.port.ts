/** An e-mail the payments service sends (merchant invitations). */
interface MailMessage {
  to: string
  subject: string
  text: string
}

/** Where e-mail goes: SMTP when configured, else the outbox table. Tests use the outbox. */
export interface Mailer {
  /** Delivers the message or throws; the caller decides what a failure means. */
  send(message: MailMessage): Promise<void>
}
