// WebAuthn options and credentials as JSON (the server's @simplewebauthn shapes) to and from the
// binary forms navigator.credentials takes and gives. Loaded before the page's modules, whose
// sign-in-passkey.js calls window.TriadWebAuthn.create(options) and .get(options).
;(function () {
  'use strict'

  function bytes(base64url) {
    const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/')
    const padded = base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')
    return Uint8Array.from(atob(padded), function (character) {
      return character.charCodeAt(0)
    })
  }

  function text(buffer) {
    let binary = ''
    new Uint8Array(buffer).forEach(function (byte) {
      binary += String.fromCharCode(byte)
    })
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  }

  /** What a created credential and an assertion share, as JSON, with `response`. */
  function asJson(credential, response) {
    return {
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    }
  }

  function withBinaryIds(list) {
    return (list || []).map(function (item) {
      return Object.assign({}, item, { id: bytes(item.id) })
    })
  }

  async function create(options) {
    const publicKey = Object.assign({}, options, {
      challenge: bytes(options.challenge),
      user: Object.assign({}, options.user, { id: bytes(options.user.id) }),
      excludeCredentials: withBinaryIds(options.excludeCredentials),
    })
    const credential = await navigator.credentials.create({ publicKey: publicKey })
    const response = credential.response
    return asJson(credential, {
      clientDataJSON: text(response.clientDataJSON),
      attestationObject: text(response.attestationObject),
      transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
    })
  }

  async function get(options) {
    const publicKey = Object.assign({}, options, { challenge: bytes(options.challenge), allowCredentials: withBinaryIds(options.allowCredentials) })
    const credential = await navigator.credentials.get({ publicKey: publicKey })
    const response = credential.response
    return asJson(credential, {
      clientDataJSON: text(response.clientDataJSON),
      authenticatorData: text(response.authenticatorData),
      signature: text(response.signature),
      userHandle: response.userHandle ? text(response.userHandle) : undefined,
    })
  }

  window.TriadWebAuthn = { create: create, get: get, supported: typeof window.PublicKeyCredential === 'function' }
})()
