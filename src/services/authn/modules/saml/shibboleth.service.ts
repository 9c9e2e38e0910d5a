import type { IncomingHttpHeaders } from 'node:http'
import type { AuthnConfig } from '../../config.ts'
import { authnErrors } from '../../errors.ts'
import type { HandoffService } from '../handoffs/index.ts'
import { type FederatedPeople, hasValue } from './federated-people.ts'

export const SHIBBOLETH_METHOD = 'shibboleth'
// Where persistent ids from the headers are linked; a colon keeps it apart from every SAML provider id.
const IDENTITY_PROVIDER_ID = ':shibboleth'

type ShibbolethSettings = NonNullable<AuthnConfig['shibboleth']>

/** A Shibboleth SP joins several values with `;`, escaping a literal one as `\;`. */
function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const raw = headers[name]
  const text = Array.isArray(raw) ? raw.join(';') : (raw ?? '')
  return text
    .split(/(?<!\\);/)
    .map((value) => value.replaceAll('\\;', ';').trim())
    .filter(Boolean)
}

/**
 * DSpace's Shibboleth mode: a Shibboleth service provider (Apache mod_shib) in front has done the
 * SAML work and passes the person's attributes as request headers. They are believed only from
 * AUTHN_TRUSTED_PROXIES — the routes check the connection before calling this.
 */
export function createShibbolethService(deps: { people: FederatedPeople; handoffs: HandoffService; settings: ShibbolethSettings }) {
  const { people, handoffs, settings } = deps
  return {
    /** A hand-off code for the person the headers name; 401 when they name nobody this deployment accepts. */
    async login(headers: IncomingHttpHeaders): Promise<string> {
      const first = (name: string) => headerValues(headers, name)[0]
      const who = {
        email: first(settings.headers.email),
        givenName: first(settings.headers.givenName),
        surname: first(settings.headers.surname),
        persistentId: first(settings.headers.persistentId),
      }
      if (!who.email && !who.persistentId) throw authnErrors.signOnFailed(new Error('the Shibboleth headers name nobody'))
      const epersonUuid = await people.resolve(IDENTITY_PROVIDER_ID, who, settings.autoRegister)
      const affiliations = headerValues(headers, settings.headers.affiliation)
      const groups = [...settings.groups, ...settings.roleGroups.filter((rule) => hasValue(affiliations, rule.value)).map((rule) => rule.group)]
      return handoffs.issue({ epersonUuid, method: SHIBBOLETH_METHOD, specialGroups: await people.groups(groups) })
    },
  }
}

export type ShibbolethService = ReturnType<typeof createShibbolethService>
