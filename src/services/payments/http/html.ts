import { escapeHtml } from '../../../core/http/escape-html.ts'

export { escapeHtml }

const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/

/** JSON that is safe inside an inline `<script>` (no `</script>`, no HTML comment openers). */
export function scriptJson(value: unknown): string {
  const json = JSON.stringify(value)
  // Hints and most values hold none of these: one scan instead of five replacements.
  if (!UNSAFE_IN_SCRIPT.test(json)) return json
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/**
 * The start of a page Triad serves to people (the hosted payment page, the merchant dashboard),
 * through its stylesheet: not indexed, no referrer sent on, sized for phones. The caller adds
 * what else its head needs and closes it.
 */
export function documentHead(lang: string, title: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(stylesheet)}">`
}
