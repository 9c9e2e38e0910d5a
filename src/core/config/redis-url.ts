/** What REDIS_URL names: one Redis server, or the sentinels that know which server is the master now. */
export type RedisLocation =
  | { kind: 'server'; url: string }
  | {
      kind: 'sentinel'
      sentinels: Array<{ host: string; port: number }>
      masterName: string
      /** The credentials of the master (and its replicas), from the URL's user information. */
      username?: string
      password?: string
      /** The sentinels' own password, when they require one (`requirepass` in sentinel.conf). */
      sentinelPassword?: string
    }

export const REDIS_URL_PATTERN = '^(rediss?|redis\\+sentinel)://.+'
export const SENTINEL_URL_FORM = 'redis+sentinel://[[user]:password@]host:port[,host:port…]/master-name[?sentinelPassword=…]'
const SENTINEL_SCHEME = 'redis+sentinel://'
const DEFAULT_SENTINEL_PORT = 26379

/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
const SENTINEL_ADDRESS = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/

/**
 * Reads REDIS_URL. A `redis://` or `rediss://` URL is ioredis's own and is passed to it as it is;
 * `redis+sentinel://` names the sentinels and the master's name. Errors say what is wrong
 * without repeating the URL, which may hold a password.
 */
export function parseRedisUrl(url: string): RedisLocation {
  if (!url.startsWith(SENTINEL_SCHEME)) return { kind: 'server', url }
  const problem = (reason: string) => new Error(`REDIS_URL must be ${SENTINEL_URL_FORM}: ${reason}`)
  const decode = (text: string, what: string) => {
    try {
      return decodeURIComponent(text)
    } catch {
      throw problem(`${what} is not percent-encoded correctly`)
    }
  }
  const rest = url.slice(SENTINEL_SCHEME.length)
  const pathAt = rest.indexOf('/')
  if (pathAt < 0) throw problem('the master name is missing after the sentinels')
  const authority = rest.slice(0, pathAt)
  const [path, query = ''] = rest.slice(pathAt + 1).split('?', 2)
  const masterName = decode(path, 'the master name')
  if (masterName === '' || masterName.includes('/')) throw problem('the master name is missing after the sentinels')

  const userInfoEnd = authority.lastIndexOf('@')
  const userInfo = userInfoEnd >= 0 ? authority.slice(0, userInfoEnd) : undefined
  const addresses = authority.slice(userInfoEnd + 1)
  if (addresses === '') throw problem('no sentinel is named')
  const sentinels = addresses
    .split(',')
    .map((address) => {
      const match = SENTINEL_ADDRESS.exec(address.trim())
      const port = Number(match?.[3] ?? DEFAULT_SENTINEL_PORT)
      if (!match || port < 1 || port > 65535) throw problem(`"${address}" is not a sentinel's host:port`)
      return { host: match[1] ?? match[2], port }
    })

  const parameters = new URLSearchParams(query)
  for (const name of parameters.keys()) if (name !== 'sentinelPassword') throw problem(`unknown parameter "${name}" (the only one is sentinelPassword)`)

  const colon = userInfo?.indexOf(':') ?? -1
  const username = userInfo === undefined ? '' : decode(colon < 0 ? userInfo : userInfo.slice(0, colon), 'the user name')
  const password = userInfo === undefined || colon < 0 ? '' : decode(userInfo.slice(colon + 1), 'the password')
  return {
    kind: 'sentinel',
    sentinels,
    masterName,
    username: username || undefined,
    password: password || undefined,
    sentinelPassword: parameters.get('sentinelPassword') || undefined,
  }
}
