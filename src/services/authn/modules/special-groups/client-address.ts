import type { FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { Cidr } from '../../config.ts'

export type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Parses an address, turning IPv4-mapped IPv6 (`::ffff:10.0.0.1`) into plain IPv4. */
function parseAddress(text: string | undefined): Address | undefined {
  if (!text) return undefined
  try {
    return ipaddr.process(text.trim())
  } catch {
    return undefined
  }
}

export function inRanges(address: Address, ranges: readonly Cidr[]): boolean {
  return ranges.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits))
}

/** True when the connection itself (not any header) comes from one of `trustedProxies`. */
export function fromTrustedProxy(request: FastifyRequest, trustedProxies: readonly Cidr[]): boolean {
  const remote = parseAddress(request.socket.remoteAddress)
  return remote !== undefined && inRanges(remote, trustedProxies)
}

/**
 * The client's address. `X-Forwarded-For` counts only when the connection comes from a trusted
 * proxy, and then the rightmost entry that is not itself a trusted proxy is the client: entries
 * further left were written by the client and can be forged.
 */
export function clientAddress(request: FastifyRequest, trustedProxies: readonly Cidr[]): Address | undefined {
  const remote = parseAddress(request.socket.remoteAddress)
  if (!remote || trustedProxies.length === 0 || !inRanges(remote, trustedProxies)) return remote
  const header = request.headers['x-forwarded-for']
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  let client: Address = remote
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = parseAddress(hops[index])
    if (!hop) break
    client = hop
    if (!inRanges(hop, trustedProxies)) break
  }
  return client
}
