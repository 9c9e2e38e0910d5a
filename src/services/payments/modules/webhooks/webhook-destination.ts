// Where a webhook may be sent. A merchant names a URL; Triad connects to it from the operator's
// network, so a URL (or a host name resolving) into that network would let a merchant reach
// what only Triad should (server-side request forgery). Only public unicast addresses are
// taken, checked when the endpoint is registered (a literal address) and again at every
// connection (what the name resolves to then: DNS may change after registration).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import ipaddr from 'ipaddr.js'
import { Agent } from 'undici'
import { bareHost, isLoopbackHost } from '../../../../core/http/loopback.ts'

export interface DestinationPolicy {
  /** PAYMENTS_WEBHOOK_ALLOW_PRIVATE: any address (a receiver inside the operator's own network). */
  allowPrivate: boolean
}


/** The range name of an address that is not public unicast (`private`, `linkLocal`, …), else undefined. */
function nonPublicRange(address: string): string | undefined {
  const range = ipaddr.process(bareHost(address)).range()
  return range === 'unicast' ? undefined : range
}

/**
 * Whether `url` may be connected to at `address`. A URL whose host is itself a loopback name or
 * address was only registered for a test merchant (or under PAYMENTS_WEBHOOK_ALLOW_HTTP), so
 * its loopback addresses are what it asked for; nothing else may land inside the network.
 */
function refusal(hostname: string, address: string, policy: DestinationPolicy): string | undefined {
  if (policy.allowPrivate) return undefined
  const range = nonPublicRange(address)
  if (range === undefined) return undefined
  if (range === 'loopback' && isLoopbackHost(hostname)) return undefined
  const shown = bareHost(hostname) === bareHost(address) ? address : `${bareHost(hostname)} resolves to ${address}`
  return `${shown}, a ${range} address: webhooks go to public addresses only (PAYMENTS_WEBHOOK_ALLOW_PRIVATE allows others)`
}

export class DestinationRefused extends Error {
  readonly code = 'EWEBHOOKDESTINATION'
}

/** `dns.lookup` with `all: true` (tests pass a resolver of their own). */
export type Resolver = (hostname: string, options: { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * An undici dispatcher whose connections resolve names through the policy: a name with any
 * refused address is not connected to at all (a name with one public and one private address
 * would let a rebinding resolver pick either).
 */
export function guardedDispatcher(policy: DestinationPolicy, resolve: Resolver = dnsLookup): Agent {
  return new Agent({
    connect: {
      lookup(hostname: string, options: object, callback: LookupCallback) {
        resolve(hostname, { ...options, all: true }, (error, addresses) => {
          if (error) return callback(error, [])
          for (const { address } of addresses) {
            const why = refusal(hostname, address, policy)
            if (why) return callback(new DestinationRefused(why), [])
          }
          const wantsAll = (options as { all?: boolean }).all === true
          if (wantsAll) return callback(null, addresses)
          callback(null, addresses[0].address, addresses[0].family)
        })
      },
    },
  })
}

/**
 * The refusal of a URL whose host is a literal address, else undefined: checked at registration
 * and before connecting (no lookup happens for a literal address; names are checked then).
 */
export function literalAddressRefusal(url: URL, policy: DestinationPolicy): string | undefined {
  const host = bareHost(url.hostname)
  return ipaddr.isValid(host) ? refusal(host, host, policy) : undefined
}
