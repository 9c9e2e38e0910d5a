export interface SamlRequestsTable {
  /** The AuthnRequest's ID; the response's InResponseTo names it. */
  request_id: string
  provider_id: string
  redirect_url: string
  expires_at: string
}

export interface SamlAssertionsTable {
  provider_id: string
  assertion_id: string
  /** When the assertion stops being acceptable anyway; the row may go then. */
  expires_at: string
}

export interface SamlIdentitiesTable {
  provider_id: string
  /** eduPersonTargetedID or pairwise-id: stable for this person at this provider, unlike an e-mail. */
  persistent_id: string
  eperson_uuid: string
  created_at: string
}

export interface SamlNameIdsTable {
  provider_id: string
  /** The NameID of a login, which the provider's LogoutRequest names again. */
  name_id: string
  name_id_format: string | null
  session_index: string | null
  eperson_uuid: string
  created_at: string
  expires_at: string
}

/** The tables this module owns. */
export interface SamlTables {
  authn_saml_requests: SamlRequestsTable
  authn_saml_assertions: SamlAssertionsTable
  authn_saml_identities: SamlIdentitiesTable
  authn_saml_name_ids: SamlNameIdsTable
}
