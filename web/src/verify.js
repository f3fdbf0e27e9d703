// Checks an event the relay sent before the page shows anything from it (SPEC section 8): its
// id recomputed, its BIP-340 signature, and its author equal to the relay key of NIP-11 `self`.
import { getEventHash, validateEvent, verifyEvent } from 'nostr-tools/pure'

// Why an event failed, in the words the page shows after "failed verification:"; null when it
// passed. The id is checked before the signature so that each failure names its own cause.
export function whyInvalid(event, relayKey) {
  if (!validateEvent(event)) return 'not a well-formed Nostr event'
  if (getEventHash(event) !== event.id) return 'bad id'
  if (!verifyEvent(event)) return 'bad signature'
  if (event.pubkey !== relayKey) return "not signed by this relay's key"
  return null
}
