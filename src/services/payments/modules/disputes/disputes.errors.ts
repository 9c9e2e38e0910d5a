import { conflict, notFound } from '../../http/errors.ts'

/** The disputes module's refusals, one factory each; the status comes with the code (http/errors.ts). */
export const disputeErrors = {
  notFound: () => notFound('Dispute'),
  fraudNotFound: () => notFound('Fraud alert'),
  transactionNotFound: () => notFound('Transaction'),
  alreadyDecided: (outcome: string) => conflict(`The dispute was already decided (${outcome})`),
}
