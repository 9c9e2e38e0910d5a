// Signed in: who, which merchant (the views load for the one chosen), and signing out.
import { api, query } from './api.js'
import { loadDisputes } from './disputes.js'
import { $, announce, fill, show, t } from './page.js'
import { showSignIn } from './session.js'
import { state } from './state.js'
import { closeDetail } from './transaction-detail.js'
import { loadTransactions } from './transactions.js'
import { loadVolume } from './volume.js'
import { loadWebhooks } from './webhooks.js'

$('sign-out').addEventListener('click', async function () {
  try {
    await api('DELETE', '/dashboard/session')
  } catch (error) {
    // Signed out either way: the session is gone or already ended.
  }
  showSignIn()
  announce(t.signedOut)
})

export async function enterDashboard() {
  show('sign-in', false)
  show('account', true)
  show('dashboard', true)
  $('link-error').hidden = true
  $('who').textContent = fill(t.signedInAs, { who: whoText(state.session) })
  show('add-passkey', Boolean(state.session.user) && window.TriadWebAuthn.supported)
  $('no-merchants').textContent = state.session.user ? t.noMerchantsUser : t.noMerchants
  const merchants = await api('GET', '/identities/' + encodeURIComponent(identityOf(state.session)) + '/merchants?' + query({ limit: 100 }))
  state.merchants = merchants
  const select = $('merchant')
  select.textContent = ''
  merchants.forEach(function (merchant) {
    const option = document.createElement('option')
    option.value = merchant.id
    option.textContent = (merchant.name || merchant.descriptor || merchant.id) + (merchant.test ? ' (' + t.testMerchant + ')' : '')
    select.appendChild(option)
  })
  show('no-merchants', merchants.length === 0)
  if (merchants.length === 0) return
  await loadMerchant(merchants[0].id)
  $('main').focus()
}

/** Who the session signs in as: the merchant user, or the app (an operator with its key). */
function identityOf(session) {
  return session.user ? session.user.id : session.app.id
}

function whoText(session) {
  return session.user ? session.user.email : fill(t.appNamed, { name: session.app.name || session.app.id })
}

$('merchant').addEventListener('change', function (event) {
  loadMerchant(event.target.value)
})

async function loadMerchant(id) {
  state.merchant = state.merchants.find(function (merchant) {
    return merchant.id === id
  })
  closeDetail(false)
  await Promise.all([loadVolume(), loadWebhooks()])
  await Promise.all([loadTransactions({}), loadDisputes()])
}
