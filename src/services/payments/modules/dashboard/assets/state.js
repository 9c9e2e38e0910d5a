// What the page knows between events: the session, the merchant, the listed and the open
// transaction. One object shared by the views, so each reads what another has set.

export const state = {
  session: null,
  merchant: null,
  merchants: [],
  rows: [],
  pageIndex: 0,
  query: {},
  current: null,
  action: null,
  idempotencyKey: null,
  /** Counts the loads of a transaction's details: an answer from an older load is dropped. */
  detailLoad: 0,
  endpoints: new Map(),
  currencies: new Map(),
  /** The token of a sign-in link this page was opened with, until it is used. */
  linkToken: null,
}
