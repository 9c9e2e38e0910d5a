/** The effect of one money movement on the merchant's balance, in the merchant's currency. */
export interface BalanceEffect {
  /** The movement's amount converted into the merchant currency (before fees). */
  converted: number
  feeFlat: number
  feeRate: number
  /** Signed: what the merchant's balance changes by. */
  balance: number
}

/** A movement that leaves the balance alone (a void, an opened or won dispute). */
export const NO_EFFECT: Readonly<BalanceEffect> = Object.freeze({ converted: 0, feeFlat: 0, feeRate: 0, balance: 0 })
