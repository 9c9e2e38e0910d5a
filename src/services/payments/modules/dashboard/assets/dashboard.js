// The merchant dashboard's script (an ES module; its views are modules beside it): signs in (a
// merchant user by an e-mailed link or a passkey, an operator with an app's key:
// POST /dashboard/session), then reads and moves money through the merchant API on this origin
// with the session cookie, sending the CSRF token on every change. No framework, no external
// requests; every text comes from the page's configuration, every value is inserted as text
// (never as HTML).
//
// Each view registers its own handlers when imported: a new view is one import line here.
import { enterDashboard } from './account.js'
import { api, report } from './api.js'
import { showSignIn } from './session.js'
import { state } from './state.js'
import './sign-in-passkey.js'
import './sign-in-link.js'
import './sign-in-key.js'
import './volume.js'
import './transactions.js'
import './transaction-detail.js'
import './transaction-actions.js'
import './disputes.js'
import './webhooks.js'

const signedIn = state.linkToken !== null ? Promise.reject(new Error('a sign-in link to follow')) : api('GET', '/dashboard/session')
signedIn
  .then(function (answer) {
    state.session = answer.session
    return enterDashboard()
  })
  .catch(function (error) {
    if (state.session) report(error)
    else showSignIn()
  })
