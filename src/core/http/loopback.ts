import ipaddr from 'ipaddr.js'

/** A bare host name of a URL: IPv6 literals lose their brackets. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase()
}

/** `localhost` (and its subdomains) or a loopback address: a host only this machine reaches. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname)
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback'
}
