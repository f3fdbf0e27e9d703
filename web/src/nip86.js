// NIP-86 management calls, as any NIP-86 client makes them: a JSON-RPC POST to the relay's own
// URL with a NIP-98 Authorization (kind 27235: u, method, payload = sha256 of the body),
// signed by the person's signer. The relay decides who may call what (SPEC section 7).
import { getToken } from 'nostr-tools/nip98'
import { sign } from './signer.js'

export class ManagementError extends Error {
  constructor(message, status) {
    super(message)
    this.status = status
  }
}

// The result of `method(params)` called as `pubkey`, or a ManagementError in the relay's words.
export async function call(pubkey, method, params = []) {
  const request = { method, params }
  const url = `${window.location.origin}/`
  // getToken hashes JSON.stringify(request) into the payload tag: the body is that same text.
  const authorization = await getToken(url, 'POST', (t) => sign(pubkey, t), true, request)
  let answer
  try {
    answer = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization },
      body: JSON.stringify(request),
    })
  } catch {
    throw new ManagementError('the relay could not be reached', 0)
  }
  let reply = null
  try {
    reply = await answer.json()
  } catch {
    // a reply that is not JSON is reported by its status below
  }
  if (!answer.ok || reply?.error) {
    const words = typeof reply?.error === 'string' ? reply.error : `HTTP ${answer.status}`
    throw new ManagementError(words, answer.status)
  }
  return reply?.result
}
