// The person's NIP-07 signer (window.nostr, provided by a browser extension). The page never
// holds a secret key: every event it sends is signed here, by the extension, and checked
// before it leaves (an extension that answers with another key or a broken event is refused).
import { verifyEvent } from 'nostr-tools/pure'

const ARRIVAL_WAIT_MS = 1500 // extensions may inject window.nostr after the page's script runs
const ARRIVAL_POLL_MS = 100

export function signerPresent() {
  return typeof window.nostr?.getPublicKey === 'function' &&
    typeof window.nostr?.signEvent === 'function'
}

// Resolves true once a signer is there, false when none arrived in time.
export async function waitForSigner(ms = ARRIVAL_WAIT_MS) {
  for (let waited = 0; !signerPresent(); waited += ARRIVAL_POLL_MS) {
    if (waited >= ms) return false
    await new Promise((resolve) => setTimeout(resolve, ARRIVAL_POLL_MS))
  }
  return true
}

export async function signerPubkey() {
  const pubkey = await window.nostr.getPublicKey()
  if (typeof pubkey !== 'string' || !/^[0-9a-f]{64}$/.test(pubkey)) {
    throw new Error('your signer gave no public key')
  }
  return pubkey
}

// Signs {kind, tags, content} now, as `pubkey`; throws with a sentence when the signer
// refuses or answers with an event that does not verify.
export async function sign(pubkey, { kind, tags = [], content = '' }) {
  const template = { kind, tags, content, created_at: Math.floor(Date.now() / 1000) }
  let event
  try {
    event = await window.nostr.signEvent(template)
  } catch {
    throw new Error('your signer did not sign')
  }
  if (!event || event.pubkey !== pubkey || event.kind !== kind || !verifyEvent(event)) {
    throw new Error('your signer answered with an event that does not verify')
  }
  return event
}
