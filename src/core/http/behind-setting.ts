import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'

/** The OpenAPI extension naming the setting that turns an operation on (issue 30 §2). */
export const REQUIRES_SETTING = 'x-triad-requires-setting'

export interface SettingRequirement {
  /** What the operator sets to turn the routes on: a variable (`AUTHN_PASSKEY_RP_ID`, `AUTHN_SHIBBOLETH=true`) or a choice of them (`AUTHN_OIDC_ISSUER or AUTHN_OIDC_PRESET`). */
  setting: string
  /** What the routes serve, for the sentence in the document and the error: "Passkeys". */
  feature: string
}

/** The route config key that holds, on a switched-off route, the sentence of its refusal. */
const SWITCHED_OFF = 'switchedOff'

// The route plugins take their options as they are typed; this module never reads them.
type RoutePlugin<Options> = (scope: FastifyInstance, options: Options) => Promise<void>

/**
 * Registers routes that only serve when a setting is on, so that `/docs` lists them either way:
 * each operation carries `x-triad-requires-setting` and a sentence naming the setting. With no
 * `options` (the setting is off) the routes are still registered, and every request to them is
 * refused by `refuse(message)` (an error in the service's own body) before any handler runs:
 * route plugins read their options in their handlers only, so none is needed then.
 *
 * The refusal is this scope's own hook, which runs after the hooks of the scopes around it. A
 * scope whose filters (CSRF, authentication) must not answer first for a switched-off route
 * installs `refuseSwitchedOffRoutes` before them: it reads the sentence from the route's config.
 */
export function routesBehindSetting<Options>(
  routes: RoutePlugin<Options>,
  options: Options | undefined,
  requirement: SettingRequirement,
  refuse: (message: string) => Error,
): FastifyPluginAsync {
  const sentence = `Switched on by ${requirement.setting}; while it is off, this route answers an error naming that setting.`
  const refusal = options === undefined ? `${requirement.feature} are switched off on this server: set ${requirement.setting} to turn them on` : undefined
  return async (scope) => {
    scope.addHook('onRoute', function markRequiredSetting(route: RouteOptions) {
      if (refusal !== undefined) route.config = { ...(route.config as object | undefined), [SWITCHED_OFF]: refusal } as typeof route.config
      const schema = (route.schema ?? {}) as Record<string, unknown>
      if (schema.hide) return
      const description = typeof schema.description === 'string' ? `${schema.description}\n\n${sentence}` : sentence
      route.schema = Object.assign({}, schema, { description, [REQUIRES_SETTING]: requirement.setting })
    })
    if (refusal !== undefined) {
      scope.addHook('onRequest', async function refuseSwitchedOff() {
        throw refuse(refusal)
      })
    }
    await scope.register(routes as FastifyPluginAsync<Options & object>, (options ?? {}) as Options & object)
  }
}

/**
 * An `onRequest` hook that refuses a request to a route switched off by `routesBehindSetting`
 * with `refuse(message)`. Added to a scope before its other hooks, it makes a switched-off
 * feature say so whatever the request (no CSRF token, no or a bad credential).
 */
export function refuseSwitchedOffRoutes(refuse: (message: string) => Error) {
  return function refuseSwitchedOffRoute(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const refusal = (request.routeOptions.config as { [SWITCHED_OFF]?: unknown } | undefined)?.[SWITCHED_OFF]
    done(typeof refusal === 'string' ? refuse(refusal) : undefined)
  }
}
