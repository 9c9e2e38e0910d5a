export interface OidcFlowsTable {
  state_hash: string
  code_verifier: string
  nonce: string
  redirect_url: string
  expires_at: string
}

/** The tables this module owns. */
export interface OidcTables {
  authn_oidc_flows: OidcFlowsTable
}
