import type { Locale } from '../../http/locale.ts'

/** The e-mail with a dashboard sign-in link, in the language of the page it was asked for on. */
export function signInMail(locale: Locale, link: string, minutes: number): { subject: string; text: string } {
  if (locale === 'da')
    return {
      subject: 'Dit login-link til Triad Payments',
      text: [
        'Brug dette link til at logge ind på forhandlerkontrolpanelet i Triad Payments:',
        link,
        `Linket virker én gang og udløber om ${minutes} minutter.`,
        'Har du ikke bedt om det, kan du se bort fra denne e-mail.',
      ].join('\n\n'),
    }
  return {
    subject: 'Your Triad Payments sign-in link',
    text: [
      'Use this link to sign in to the Triad Payments merchant dashboard:',
      link,
      `It works once and expires in ${minutes} minutes.`,
      'If you did not ask for it, you can ignore this e-mail.',
    ].join('\n\n'),
  }
}
