import { generateServiceProviderMetadata, SAML, type CacheProvider, type Profile, ValidateInResponseTo } from '@node-saml/node-saml'
import { DOMParser } from '@xmldom/xmldom'
import xpath from 'xpath'
import type { Clock } from '../../../../core/clock.ts'
import { AppError } from '../../../../core/errors/app-error.ts'
import type { AuthnConfig } from '../../config.ts'
import type { ModuleDatabase } from '../../db.ts'
import { authnErrors } from '../../errors.ts'
import { PAIRWISE_ID_ATTRIBUTE, type SamlProviderConfig } from '../../saml-config.ts'
import type { HandoffService } from '../handoffs/index.ts'
import { createIdpMetadataSource, type IdpDescription, type IdpMetadataSource } from './idp-metadata.ts'
import { type FederatedPeople, type FederatedPerson, hasValue } from './federated-people.ts'
import { deleteExpired, findRequest, insertRequest, latestNameId, recordAssertion, recordNameId, takeNameId, takeRequest } from './saml.repository.ts'
import type { SamlTables } from './saml.table.ts'
import type { SpCredentials } from './sp-credentials.ts'

export const SAML_METHOD = 'saml'
/** Where DSpace serves its SAML relying party (and so where federations have it registered). */
export const SAML_PATH = '/server/saml2'
const REQUEST_LIFETIME_MS = 10 * 60_000
// node-saml compares a request's age with the system clock; the age is enforced here instead,
// with the injected clock, by the store (see requestStore), so its own limit is made moot.
const NODE_SAML_REQUEST_AGE_MS = 100 * 365 * 24 * 3600_000
const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol'
const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion'
const select = xpath.useNamespaces({ samlp: SAMLP, saml: SAML_NS })

type SamlSettings = NonNullable<AuthnConfig['saml']>

export type AuthnRequestDelivery = { redirect: string } | { post: { action: string; fields: Record<string, string> } }

interface Provider {
  config: SamlProviderConfig
  source: IdpMetadataSource
  spEntityId: string
  acsUrl: string
  sloCallbackUrl: string
}


/**
 * SAML 2.0 Web Browser SSO as DSpace 8 offers it, one relying party per configured identity
 * provider: AuthnRequest over HTTP-Redirect (signed), Response over HTTP-POST to the assertion
 * consumer. node-saml checks the XML signature (of the response or of the assertion, against
 * the provider's certificates), decrypts, matches InResponseTo and checks the audience; this
 * service adds what it leaves out or does against the system clock: Destination, Recipient,
 * the validity windows (injected clock, AUTHN_SAML_CLOCK_SKEW), one use per request and per
 * assertion (database, so any instance may receive the response), and refuses XML comments.
 */
export function createSamlService(deps: {
  database: ModuleDatabase<SamlTables>
  clock: Clock
  people: FederatedPeople
  handoffs: HandoffService
  settings: SamlSettings
  credentials: SpCredentials
  /** How long a login's session may last: how long its NameID may still be named by a LogoutRequest. */
  sessionMaxAgeMs: number
  /** Ends every session of an eperson (a logout everywhere, as DSpace's). */
  endSessions: (epersonUuid: string) => Promise<void>
  log: (message: string) => void
}) {
  const { database, clock, people, handoffs, settings, credentials } = deps
  const providers = new Map<string, Provider>(
    settings.providers.map((config) => [
      config.id,
      {
        config,
        source: createIdpMetadataSource(config, clock, settings.metadataRefreshMs, deps.log),
        spEntityId: config.spEntityId ?? `${settings.baseUrl}${SAML_PATH}/service-provider-metadata/${config.id}`,
        acsUrl: `${settings.baseUrl}${SAML_PATH}/assertion-consumer/${config.id}`,
        sloCallbackUrl: `${settings.baseUrl}${SAML_PATH}/single-logout/${config.id}`,
      },
    ]),
  )

  function provider(id: string): Provider {
    const found = providers.get(id)
    if (!found) throw authnErrors.notFound(`No SAML identity provider ${JSON.stringify(id)}`)
    return found
  }

  /** node-saml's request cache, kept in the database; `redirectUrl` is what a new request is stored with. */
  function requestStore(providerId: string, redirectUrl = ''): CacheProvider {
    return {
      async saveAsync(key, value) {
        const now = clock.now()
        await deleteExpired(database.db, now.toISOString())
        await insertRequest(database.db, {
          request_id: key,
          provider_id: providerId,
          redirect_url: redirectUrl,
          expires_at: new Date(now.getTime() + REQUEST_LIFETIME_MS).toISOString(),
        })
        return { value, createdAt: now.getTime() }
      },
      async getAsync(key) {
        const row = await findRequest(database.db, providerId, key)
        if (!row || row.expires_at <= clock.now().toISOString()) return null
        return new Date(Date.parse(row.expires_at) - REQUEST_LIFETIME_MS).toISOString()
      },
      // The request is consumed by takeRequest once the response is valid, in one conditional
      // delete; node-saml's own read-then-remove would let two instances both accept it.
      removeAsync: async () => null,
    }
  }

  function relyingParty(entry: Provider, idp: IdpDescription, store: CacheProvider, inResponseTo = ValidateInResponseTo.always, postBinding = false): SAML {
    return new SAML({
      // The HTTP-POST binding carries the request base64-encoded as it is (and signed inside);
      // only HTTP-Redirect deflates it.
      authnRequestBinding: postBinding ? 'HTTP-POST' : 'HTTP-Redirect',
      skipRequestCompression: postBinding,
      issuer: entry.spEntityId,
      callbackUrl: entry.acsUrl,
      audience: entry.spEntityId,
      entryPoint: idp.ssoUrl,
      logoutUrl: idp.sloUrl ?? idp.ssoUrl,
      logoutCallbackUrl: entry.sloCallbackUrl,
      idpIssuer: idp.entityId,
      idpCert: idp.certificates,
      privateKey: credentials.key,
      publicCert: credentials.cert,
      decryptionPvk: credentials.key,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'sha256',
      // Either a signed response or a signed assertion will do (Shibboleth signs the assertion,
      // others the response); node-saml then insists on the one present being valid.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      validateInResponseTo: inResponseTo,
      cacheProvider: store,
      requestIdExpirationPeriodMs: NODE_SAML_REQUEST_AGE_MS,
      // Checked below against the injected clock.
      acceptedClockSkewMs: -1,
      identifierFormat: null,
      // Asking for a password context would turn away providers that use MFA or Kerberos.
      disableRequestedAuthnContext: true,
    })
  }

  function checkAfterSignature(entry: Provider, idp: IdpDescription, responseXml: string, profile: Profile): { assertionId: string; notOnOrAfter: number } {
    const fail = (reason: string) => authnErrors.signOnFailed(new Error(reason))
    const parser = new DOMParser({ onError: () => {} })
    const response = parser.parseFromString(responseXml, 'text/xml') as unknown as Node
    // Comments split text nodes, and a parser that reads only the first one turns
    // "user@evil.com<!---->.good.edu" into another person; no provider needs them.
    if ((select('//comment()', response) as Node[]).length > 0) throw fail('XML comments are refused')
    const destination = (select('/samlp:Response/@Destination', response) as Attr[])[0]?.value
    if (destination !== undefined && destination !== entry.acsUrl) throw fail(`Destination ${destination} is not ${entry.acsUrl}`)

    // The assertion node-saml verified (never the response's other, unsigned content).
    const assertionXml = profile.getAssertionXml?.()
    if (assertionXml === undefined) throw fail('no signed assertion')
    const assertion = parser.parseFromString(assertionXml, 'text/xml') as unknown as Node
    const issuer = (select('/saml:Assertion/saml:Issuer/text()', assertion) as Node[])[0]?.nodeValue
    if (issuer !== idp.entityId) throw fail(`assertion issuer ${issuer} is not ${idp.entityId}`)
    const now = clock.now().getTime()
    const skew = settings.clockSkewMs
    const time = (node: Node, name: string): number | undefined => {
      const value = (select(`@${name}`, node) as Attr[])[0]?.value
      if (value === undefined) return undefined
      const ms = Date.parse(value)
      if (Number.isNaN(ms)) throw fail(`${name} is not a time`)
      return ms
    }
    const conditions = select('/saml:Assertion/saml:Conditions', assertion) as Node[]
    if (conditions.length !== 1) throw fail('the assertion must carry one Conditions element')
    const condition = conditions[0] as Node
    const notBefore = time(condition, 'NotBefore')
    const notOnOrAfter = time(condition, 'NotOnOrAfter')
    if (notBefore !== undefined && now + skew < notBefore) throw fail('the assertion is not valid yet')
    if (notOnOrAfter !== undefined && now - skew >= notOnOrAfter) throw fail('the assertion has expired')

    const confirmations = select("/saml:Assertion/saml:Subject/saml:SubjectConfirmation[@Method='urn:oasis:names:tc:SAML:2.0:cm:bearer']/saml:SubjectConfirmationData", assertion) as Node[]
    const confirmed = confirmations.find((data) => {
      const recipient = (select('@Recipient', data) as Attr[])[0]?.value
      const until = time(data, 'NotOnOrAfter')
      const from = time(data, 'NotBefore')
      const inResponseTo = (select('@InResponseTo', data) as Attr[])[0]?.value
      return recipient === entry.acsUrl && until !== undefined && now - skew < until && (from === undefined || now + skew >= from) && (inResponseTo === undefined || inResponseTo === profile.inResponseTo)
    })
    if (!confirmed) throw fail('no bearer SubjectConfirmation for this recipient, valid now')
    const assertionId = (select('/saml:Assertion/@ID', assertion) as Attr[])[0]?.value
    if (!assertionId) throw fail('the assertion has no ID')
    const until = time(confirmed, 'NotOnOrAfter') ?? now
    return { assertionId, notOnOrAfter: Math.max(until, notOnOrAfter ?? until) + skew }
  }

  async function validate(entry: Provider, idp: IdpDescription, samlResponse: string): Promise<{ profile: Profile; checked: ReturnType<typeof checkAfterSignature> }> {
    const responseXml = Buffer.from(samlResponse, 'base64').toString('utf8')
    const attempt = async (described: IdpDescription) => {
      const { profile } = await relyingParty(entry, described, requestStore(entry.config.id)).validatePostResponseAsync({ SAMLResponse: samlResponse })
      if (!profile) throw new Error('no assertion in the response')
      return { profile, checked: checkAfterSignature(entry, described, responseXml, profile) }
    }
    try {
      return await attempt(idp)
    } catch (error) {
      // A provider that rolled its key publishes the new certificate in its metadata first:
      // read it again (at most once a minute) and try once more if the certificates changed.
      if (!(error instanceof Error) || !/signature/i.test(error.message)) throw error
      const fresh = await entry.source.reload()
      if (fresh.certificates.join() === idp.certificates.join()) throw error
      return attempt(fresh)
    }
  }

  function attributeValues(profile: Profile, name: string): string[] {
    const attributes = (profile.attributes ?? {}) as Record<string, unknown>
    const value = attributes[name]
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value]
    return values
      .map((item: unknown) => {
        if (typeof item === 'string') return item
        // eduPersonTargetedID is a NameID element inside the AttributeValue.
        if (item && typeof item === 'object' && 'NameID' in item) {
          const nameId = (item as { NameID: Array<{ _?: string } | string> }).NameID[0]
          return typeof nameId === 'string' ? nameId : nameId?._
        }
        return undefined
      })
      .filter((item): item is string => typeof item === 'string' && item.trim().length > 0)
      .map((item) => item.trim())
  }

  /** What the assertion says about the person, through the provider's attribute names. */
  function person(entry: Provider, profile: Profile): FederatedPerson {
    const names = entry.config.attributes
    const first = (name: string) => attributeValues(profile, name)[0]
    return {
      email: first(names.email),
      givenName: first(names.givenName),
      surname: first(names.surname),
      persistentId: first(names.persistentId) ?? first(PAIRWISE_ID_ATTRIBUTE),
    }
  }

  /** Groups of this login: the provider's own, and those whose attribute value the person has. */
  function loginGroups(entry: Provider, profile: Profile): Promise<string[]> {
    const names = [...entry.config.groups]
    for (const rule of entry.config.attributeGroups) {
      const attribute = (entry.config.attributes as Record<string, string>)[rule.attribute] ?? rule.attribute
      if (hasValue(attributeValues(profile, attribute), rule.value)) names.push(rule.group)
    }
    return people.groups(names)
  }

  /** The provider as its metadata describes it; 503 when it was never read and cannot be now. */
  async function described(entry: Provider): Promise<IdpDescription> {
    try {
      return await entry.source.current()
    } catch (error) {
      throw authnErrors.providerUnavailable(error)
    }
  }

  return {
    /** Triad's service-provider metadata for one provider: what its administrator registers. */
    metadata(id: string): string {
      const entry = provider(id)
      return generateServiceProviderMetadata({
        issuer: entry.spEntityId,
        callbackUrl: entry.acsUrl,
        logoutCallbackUrl: entry.sloCallbackUrl,
        privateKey: credentials.key,
        publicCerts: credentials.cert,
        decryptionPvk: credentials.key,
        decryptionCert: credentials.cert,
        signatureAlgorithm: 'sha256',
        digestAlgorithm: 'sha256',
        wantAssertionsSigned: true,
        identifierFormat: null,
      })
    },

    /**
     * A signed AuthnRequest, whose id is stored with `redirectUrl`, on its way to the provider:
     * its SSO URL carrying the request (HTTP-Redirect binding, the signature in the query), or
     * the form fields to post there (HTTP-POST binding, the signature inside the XML).
     */
    async start(id: string, redirectUrl: string): Promise<AuthnRequestDelivery> {
      const entry = provider(id)
      const idp = await described(entry)
      const store = requestStore(id, redirectUrl)
      if (entry.config.authnRequestBinding === 'HTTP-Redirect') return { redirect: await relyingParty(entry, idp, store).getAuthorizeUrlAsync('', undefined, {}) }
      const message = await relyingParty(entry, idp, store, ValidateInResponseTo.always, true).getAuthorizeMessageAsync('', undefined, {})
      const fields = Object.fromEntries(Object.entries(message).filter((pair): pair is [string, string] => typeof pair[1] === 'string'))
      return { post: { action: idp.ssoUrl, fields } }
    },

    /** Validates a response posted to the assertion consumer; a hand-off code for POST /authn/login, and where to send the browser. */
    async finish(id: string, samlResponse: string): Promise<{ code: string; redirectUrl: string }> {
      const entry = provider(id)
      const idp = await described(entry)
      let result: Awaited<ReturnType<typeof validate>>
      try {
        result = await validate(entry, idp, samlResponse)
      } catch (error) {
        throw error instanceof AppError ? error : authnErrors.signOnFailed(error)
      }
      const { profile, checked } = result
      const requestId = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : undefined
      const request = requestId ? await findRequest(database.db, id, requestId) : undefined
      if (!requestId || !request || !(await takeRequest(database.db, id, requestId))) {
        throw authnErrors.signOnFailed(new Error('the request this response answers is unknown or already used'))
      }
      const fresh = await recordAssertion(database.db, {
        provider_id: id,
        assertion_id: checked.assertionId,
        expires_at: new Date(checked.notOnOrAfter).toISOString(),
      })
      if (!fresh) throw authnErrors.signOnFailed(new Error('this assertion was used before'))
      const who = person(entry, profile)
      const epersonUuid = await people.resolve(id, who, entry.config.autoRegister)
      if (typeof profile.nameID === 'string' && profile.nameID !== '') {
        const now = clock.now()
        await recordNameId(
          database.db,
          {
            provider_id: id,
            name_id: profile.nameID,
            name_id_format: typeof profile.nameIDFormat === 'string' ? profile.nameIDFormat : null,
            session_index: typeof profile.sessionIndex === 'string' ? profile.sessionIndex : null,
            eperson_uuid: epersonUuid,
            created_at: now.toISOString(),
            expires_at: new Date(now.getTime() + deps.sessionMaxAgeMs).toISOString(),
          },
          now.toISOString(),
        )
      }
      const code = await handoffs.issue({ epersonUuid, method: SAML_METHOD, specialGroups: await loginGroups(entry, profile) })
      return { code, redirectUrl: request.redirect_url }
    },

    /**
     * A LogoutRequest the provider posted (front-channel single logout): signed by the provider,
     * not expired by our clock, it ends every session of the epersons its NameID was given to.
     * Answers where to send the browser with the LogoutResponse, when the provider has a
     * SingleLogoutService for it.
     */
    async logoutRequest(id: string, samlRequest: string, relayState: string | undefined): Promise<string | undefined> {
      const entry = provider(id)
      const idp = await described(entry)
      const relying = relyingParty(entry, idp, requestStore(id))
      let profile: Profile
      try {
        const parser = new DOMParser({ onError: () => {} })
        const request = parser.parseFromString(Buffer.from(samlRequest, 'base64').toString('utf8'), 'text/xml') as unknown as Node
        if ((select('//comment()', request) as Node[]).length > 0) throw new Error('XML comments are refused')
        const destination = (select('/samlp:LogoutRequest/@Destination', request) as Attr[])[0]?.value
        if (destination !== undefined && destination !== entry.sloCallbackUrl) throw new Error(`Destination ${destination} is not ${entry.sloCallbackUrl}`)
        const until = (select('/samlp:LogoutRequest/@NotOnOrAfter', request) as Attr[])[0]?.value
        if (until !== undefined && !(clock.now().getTime() - settings.clockSkewMs < Date.parse(until))) throw new Error('the LogoutRequest has expired')
        const validated = await relying.validatePostRequestAsync({ SAMLRequest: samlRequest })
        if (!validated.profile) throw new Error('no LogoutRequest')
        profile = validated.profile
      } catch (error) {
        throw authnErrors.signOnFailed(error)
      }
      for (const epersonUuid of await takeNameId(database.db, id, profile.nameID)) await deps.endSessions(epersonUuid)
      return idp.sloUrl ? relying.getLogoutResponseUrlAsync(profile, relayState ?? '', {}, true) : undefined
    },

    /**
     * A logout started here (POST /authn/logout with `action`) by someone whose login was SAML:
     * the provider's SingleLogoutService URL with a signed LogoutRequest naming them, its id
     * stored with `returnUrl` for the LogoutResponse. Undefined when there is nobody to name or
     * the provider has no SingleLogoutService.
     */
    async startLogout(epersonUuid: string, returnUrl: string): Promise<string | undefined> {
      const now = clock.now().toISOString()
      const row = await latestNameId(database.db, epersonUuid, now)
      const entry = row ? providers.get(row.provider_id) : undefined
      if (!row || !entry) return undefined
      const idp = await described(entry)
      if (!idp.sloUrl) return undefined
      await takeNameId(database.db, row.provider_id, row.name_id)
      const subject = {
        issuer: idp.entityId,
        nameID: row.name_id,
        nameIDFormat: row.name_id_format ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
        ...(row.session_index ? { sessionIndex: row.session_index } : {}),
      }
      return relyingParty(entry, idp, requestStore(row.provider_id, returnUrl)).getLogoutUrlAsync(subject, '', {})
    },

    /** The provider's LogoutResponse to a logout started here: where the person then goes (the stored `return`). */
    async finishLogout(id: string, samlResponse: string): Promise<string> {
      const entry = provider(id)
      const idp = await described(entry)
      const fail = (reason: string) => authnErrors.signOnFailed(new Error(reason))
      let inResponseTo: string | undefined
      try {
        const response = new DOMParser({ onError: () => {} }).parseFromString(Buffer.from(samlResponse, 'base64').toString('utf8'), 'text/xml') as unknown as Node
        if ((select('//comment()', response) as Node[]).length > 0) throw fail('XML comments are refused')
        if ((select('/samlp:LogoutResponse', response) as Node[]).length !== 1) throw fail('not a LogoutResponse')
        const issuer = (select('/samlp:LogoutResponse/saml:Issuer/text()', response) as Node[])[0]?.nodeValue
        if (issuer !== idp.entityId) throw fail(`issuer ${issuer} is not ${idp.entityId}`)
        const destination = (select('/samlp:LogoutResponse/@Destination', response) as Attr[])[0]?.value
        if (destination !== undefined && destination !== entry.sloCallbackUrl) throw fail(`Destination ${destination} is not ${entry.sloCallbackUrl}`)
        inResponseTo = (select('/samlp:LogoutResponse/@InResponseTo', response) as Attr[])[0]?.value
        // node-saml insists on the response's own signature for a LogoutResponse; InResponseTo is matched below.
        const validated = await relyingParty(entry, idp, requestStore(id), ValidateInResponseTo.never).validatePostResponseAsync({ SAMLResponse: samlResponse })
        if (!validated.loggedOut) throw fail('not a LogoutResponse')
      } catch (error) {
        throw error instanceof AppError ? error : authnErrors.signOnFailed(error)
      }
      const request = inResponseTo ? await findRequest(database.db, id, inResponseTo) : undefined
      if (!inResponseTo || !request || request.expires_at <= clock.now().toISOString() || !(await takeRequest(database.db, id, inResponseTo))) {
        throw fail('the logout this response answers is unknown or already used')
      }
      return request.redirect_url
    },
  }
}

export type SamlService = ReturnType<typeof createSamlService>
