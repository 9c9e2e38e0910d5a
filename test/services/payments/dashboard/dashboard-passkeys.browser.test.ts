import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromiumSkipReason } from '../../../helpers/browser.ts'
import { shot, start, useBrowser } from './dashboard-page.ts'
import { awaitSignInMail, inviteUser } from './sign-in-links.ts'

// A merchant user adds a passkey in the dashboard and signs in with it (issue 30), in Chromium
// with a virtual authenticator (CTAP2, resident keys, user verification) attached over the
// DevTools protocol: real key pairs and signatures, no person to touch anything. WebAuthn needs
// a secure context and a host name as relying party: http://localhost is both.
useBrowser(['--host-resolver-rules=MAP localhost 127.0.0.1'])

describe('merchant users\' passkeys in the dashboard, in Chromium', { skip: chromiumSkipReason() }, () => {
  it('signed in by an e-mailed link, a user adds a passkey, signs out, and signs in with the passkey as themselves', { timeout: 60_000 }, async (t) => {
    const fixture = await start(t, { locale: 'en-GB', viewport: { width: 1280, height: 900 } })
    const { page, owner, merchant, app, db, id } = fixture
    const base = fixture.base.replace('127.0.0.1', 'localhost')
    const email = 'cy@shop.example'
    const userId = await inviteUser(app, owner.key, merchant.id, email)
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('WebAuthn.enable', { enableUI: false })
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    })

    await page.goto(`${base}/dashboard`)
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'Send sign-in link' }).click()
    await page.locator('#email-sent').waitFor()
    const { link } = await awaitSignInMail(db, email)
    assert.ok(link.startsWith(`${base}/dashboard`), link)
    await page.goto(link)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.locator('#who').getByText(`Signed in as ${email}`).waitFor()

    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('#live').getByText('Passkey added. Next time you can sign in with it.').waitFor()
    const stored = await db.selectFrom('payments_dashboard_passkeys').select(['id', 'user_id']).where('user_id', '=', userId).execute()
    assert.equal(stored.length, 1)
    await shot(page, 'passkeys-1-added')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.deepEqual(await page.context().cookies(), [])
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    await page.locator('#who').getByText(`Signed in as ${email}`).waitFor()
    await page.getByRole('button', { name: `Open transaction ${id}` }).waitFor()
    const [used] = await db.selectFrom('payments_dashboard_passkeys').select(['last_used']).where('user_id', '=', userId).execute()
    assert.ok(used.last_used, 'the sign-in is recorded on the passkey')
    await shot(page, 'passkeys-2-signed-in-with-passkey')
  })
})
