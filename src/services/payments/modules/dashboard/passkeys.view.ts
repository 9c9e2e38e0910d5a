import type { Messages } from './dashboard.i18n.ts'

/**
 * The "Your passkeys" section of the dashboard page, filled by assets/passkeys.js for a merchant
 * user (hidden for an operator signed in with an app's key): the user's passkeys, each with a
 * Remove button that opens a confirmation step.
 */
export function renderPasskeysSection(e: (key: keyof Messages) => string): string {
  const columns = (['passkeyName', 'passkeyCreated', 'passkeyLastUsed', 'passkeyActions'] as const).map((column) => `<th scope="col">${e(column)}</th>`).join('')
  return `
    <section id="passkeys" class="card" aria-labelledby="passkeys-title" hidden>
      <h2 id="passkeys-title" tabindex="-1">${e('passkeysTitle')}</h2>
      <div class="table-wrap" tabindex="0" role="region" aria-labelledby="passkeys-caption">
        <table id="passkeys-table">
          <caption id="passkeys-caption" class="visually-hidden">${e('passkeysTitle')}</caption>
          <thead><tr>${columns}</tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <form id="passkey-confirm" class="confirm" novalidate hidden>
        <p id="passkey-confirm-text"></p>
        <div class="buttons">
          <button type="submit" id="passkey-confirm-submit" class="primary">${e('removePasskeySubmit')}</button>
          <button type="button" id="passkey-confirm-cancel" class="secondary">${e('cancel')}</button>
        </div>
      </form>
      <p id="passkeys-error" class="field-error" hidden></p>
    </section>`
}
