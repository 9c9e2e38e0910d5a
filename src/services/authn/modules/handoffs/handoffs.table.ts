export interface HandoffsTable {
  code_hash: string
  eperson_uuid: string
  method: string
  expires_at: string
  /** JSON array of group uuids the login grants beyond its method's (SAML attribute groups); null for none. */
  special_groups: string | null
}

/** The tables this module owns. */
export interface HandoffsTables {
  authn_handoffs: HandoffsTable
}
