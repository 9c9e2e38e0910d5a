import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromiumSkipReason } from '../../../helpers/browser.ts'
import { type PageDocument, shot, start, STEP_TIMEOUT_MS, useBrowser } from './dashboard-page.ts'
import { awaitSignInMail, inviteUser } from './sign-in-links.ts'

// Merchant users sign in to the dashboard with an e-mailed link (issue 30), in Chromium against
// a real Triad socket on 127.0.0.1: the link is read from the outbox (no SMTP configured).
useBrowser()

describe('merchant users in the dashboard, in Chromium', { skip: chromiumSkipReason() }, () => {
  it('asks for a link, follows it from the e-mail, sees the dashboard as that user, captures, and the capture is theirs', { timeout: 60_000 }, async (t) => {
    const fixture = await start(t, { locale: 'en-GB', viewport: { width: 1280, height: 900 } })
    const { page, base, id, owner, merchant, app, db, call, deliver, receiver } = fixture
    const email = 'ana@shop.example'
    const userId = await inviteUser(app, owner.key, merchant.id, email)

    await page.goto(`${base}/dashboard`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'email')
    await page.getByRole('button', { name: 'Send sign-in link' }).click()
    await page.locator('#email-error').getByText('Enter your e-mail address.').waitFor()
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'Send sign-in link' }).click()
    await page.locator('#email-sent').getByText(`If ${email} belongs to a user of a merchant, a sign-in link is on its way. It works once, within 15 minutes.`).waitFor()
    await shot(page, 'users-1-link-sent')

    const { link } = await awaitSignInMail(db, email)
    assert.ok(link.startsWith(`${base}/dashboard?lang=en#sign-in=`), link)
    await page.goto(link)
    await page.getByRole('heading', { name: 'Continue signing in' }).waitFor()
    assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar at once')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Volume' }).waitFor()
    await page.locator('#who').getByText(`Signed in as ${email}`).waitFor()
    const cookies = await page.context().cookies()
    assert.equal(cookies.length, 1)
    assert.equal(cookies[0].httpOnly, true)
    assert.equal(cookies[0].sameSite, 'Strict')

    await page.getByRole('button', { name: `Open transaction ${id}` }).click()
    await page.getByRole('heading', { name: `Transaction ${id}` }).waitFor()
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    await page.getByLabel('Amount in EUR').fill('20')
    await page.getByRole('button', { name: 'Confirm capture' }).click()
    await page.locator('#live').getByText('Captured €20.00.').waitFor()
    const byCell = page.locator('#trail-table tbody tr').nth(1).locator('td').last()
    assert.equal(await byCell.textContent(), email)
    await shot(page, 'users-2-captured-by-user')

    const transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.deepEqual(transaction.trail[0].actor, { type: 'user', id: userId, email })
    // The webhook event says who: the receiver gets the capture with the user as its actor.
    for (const deadline = Date.now() + STEP_TIMEOUT_MS; Date.now() < deadline && !receiver.types().includes('transaction.captured'); ) {
      await deliver()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const captured = receiver.received.find((item) => item.event.type === 'transaction.captured')
    assert.ok(captured, 'the capture was delivered')
    assert.deepEqual(captured.event.actor, { type: 'user', id: userId, email })

    // Signed out, the same link does not sign in again: the page says so and offers a new one.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.goto(link)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.locator('#link-error').getByText(/^This sign-in link is no longer valid/).waitFor()
    assert.deepEqual(await page.context().cookies(), [])
  })

  it('in Danish: the link e-mail and the pages speak Danish, and a refund is the user\'s in the trail', { timeout: 60_000 }, async (t) => {
    const fixture = await start(t, { locale: 'da-DK', viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true })
    const { page, base, id, owner, merchant, app, db, call } = fixture
    const email = 'bo@butik.example'
    await inviteUser(app, owner.key, merchant.id, email)
    assert.equal((await call('POST', `/transactions/${id}/captures`, { amount: 5000 })).statusCode, 201)

    await page.goto(`${base}/dashboard`)
    await page.getByRole('heading', { name: 'Log ind' }).waitFor()
    await page.getByLabel('E-mailadresse').fill(email)
    await page.getByRole('button', { name: 'Send login-link' }).click()
    await page.locator('#email-sent').getByText(`Hvis ${email} tilhører en bruger hos en forhandler, er et login-link på vej. Det virker én gang inden for 15 minutter.`).waitFor()
    const { mail, link } = await awaitSignInMail(db, email)
    assert.equal(mail.subject, 'Dit login-link til Triad Payments')
    assert.ok(link.startsWith(`${base}/dashboard?lang=da#sign-in=`), link)

    await page.goto(link)
    await page.getByRole('heading', { name: 'Fortsæt med at logge ind' }).waitFor()
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'follow-link')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Omsætning' }).waitFor()
    await page.locator('#who').getByText(`Logget ind som ${email}`).waitFor()
    await page.getByRole('button', { name: `Åbn transaktion ${id}` }).click()
    await page.getByRole('heading', { name: `Transaktion ${id}` }).waitFor()
    await page.getByRole('button', { name: 'Refundér', exact: true }).click()
    await page.getByLabel('Beløb i EUR').fill('7,50')
    await page.getByRole('button', { name: 'Bekræft: refundér' }).click()
    await page.locator('#live').getByText(/^7,50\s€ er refunderet\.$/).waitFor()
    const refundRow = page.locator('#trail-table tbody tr').nth(2)
    assert.equal(await refundRow.locator('td').first().textContent(), 'Refundering')
    assert.equal(await refundRow.locator('td').last().textContent(), email)
    assert.equal(await refundRow.locator('td').last().getAttribute('data-label'), 'Udført af')
    assert.equal(await page.locator('#trail-table tbody tr').nth(1).locator('td').last().textContent(), `app ${owner.id}`, 'the capture made with the key')
    await shot(page, 'users-3-da-refunded-by-user')
  })
})
