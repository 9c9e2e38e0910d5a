import nodemailer from 'nodemailer'
import type { Mailer } from './mailer.port.ts'

/** Sends through the SMTP server of PAYMENTS_SMTP_URL (nodemailer). */
export function createSmtpMailer(url: string, from: string): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(url)
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text })
    },
    close: () => transport.close(),
  }
}
