import { conflict, forbidden, notFound } from '../../http/errors.ts'

/** The transactions module's refusals, one factory each; the status comes with the code (http/errors.ts). */
export const transactionErrors = {
  notFound: () => notFound('Transaction'),
  /** An app that is not a member of the transaction's merchant (the merchant API answers 403 here, as Paylike's does). */
  notAMember: () => forbidden("This app is not a member of the transaction's merchant"),
  cardNotFound: () => notFound('Card'),
  /** A conflict that outlived the retries of the database transaction. */
  changedConcurrently: () => conflict('The transaction was changed concurrently; try again'),
}
