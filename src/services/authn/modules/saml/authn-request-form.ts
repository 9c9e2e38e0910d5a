import { randomBytes } from 'node:crypto'
import { escapeHtml } from '../../../../core/http/escape-html.ts'

/**
 * The page of the HTTP-POST binding: a form carrying the signed AuthnRequest to the provider's
 * SSO URL, submitted at once by a script the page's own Content-Security-Policy allows by its
 * nonce (and by hand when scripts are off).
 */
export function authnRequestForm(post: { action: string; fields: Record<string, string> }): { html: string; contentSecurityPolicy: string } {
  const nonce = randomBytes(16).toString('base64')
  const inputs = Object.entries(post.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n')
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Signing in…</title></head>
<body>
<form method="post" action="${escapeHtml(post.action)}">
${inputs}
<noscript><button type="submit">Continue to sign in</button></noscript>
</form>
<script nonce="${nonce}">document.forms[0].submit()</script>
</body>
</html>
`
  return { html, contentSecurityPolicy: `default-src 'none'; script-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'` }
}
