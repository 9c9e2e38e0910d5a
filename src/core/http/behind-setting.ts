import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify'

/** The OpenAPI extension naming the setting that turns an operation on (issue 30 §2). */
export const REQUIRES_SETTING = 'x-triad-requires-setting'

export interface SettingRequirement {
  /** The variable the operator sets to turn the routes on (`AUTHN_PASSKEY_RP_ID`, `AUTHN_SHIBBOLETH=true`). */
  setting: string
  /** What the routes serve, for the sentence in the document and the error: "Passkeys". */
  feature: string
}

// The route plugins take their options as they are typed; this module never reads them.
type RoutePlugin<Options> = (scope: FastifyInstance, options: Options) => Promise<void>

/**
 * Registers routes that only serve when a setting is on, so that `/docs` lists them either way:
 * each operation carries `x-triad-requires-setting` and a sentence naming the setting. With no
 * `options` (the setting is off) the routes are still registered, and every request to them is
 * refused by `refuse(message)` (an error in the service's own body) before any handler runs:
 * route plugins read their options in their handlers only, so none is needed then.
 */
export function routesBehindSetting<Options>(
  routes: RoutePlugin<Options>,
  options: Options | undefined,
  requirement: SettingRequirement,
  refuse: (message: string) => Error,
): FastifyPluginAsync {
  const sentence = `Switched on by ${requirement.setting}; while it is off, this route answers an error naming that setting.`
  return async (scope) => {
    scope.addHook('onRoute', function markRequiredSetting(route: RouteOptions) {
      const schema = (route.schema ?? {}) as Record<string, unknown>
      if (schema.hide) return
      const description = typeof schema.description === 'string' ? `${schema.description}\n\n${sentence}` : sentence
      route.schema = Object.assign({}, schema, { description, [REQUIRES_SETTING]: requirement.setting })
    })
    if (options === undefined) {
      const message = `${requirement.feature} are switched off on this server: set ${requirement.setting} to turn them on`
      scope.addHook('onRequest', async function refuseSwitchedOff() {
        throw refuse(message)
      })
    }
    await scope.register(routes as FastifyPluginAsync<Options & object>, (options ?? {}) as Options & object)
  }
}
