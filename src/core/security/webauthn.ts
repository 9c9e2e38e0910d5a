/** The challenge a browser signed, read from its client data (base64url JSON); undefined if unreadable. */
export function signedChallenge(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = typeof data === 'object' && data !== null ? Reflect.get(data, 'challenge') : undefined
    return typeof challenge === 'string' ? challenge : undefined
  } catch {
    return undefined
  }
}
