// Checks an event the relay sent before the page shows anything from it (SPEC section 8): its
// id recomputed, its BIP-340 signature, and its author equal to the relay key of NIP-11 `self`.
import { getEventHash, validateEvent, verifyEvent } from 'nostr-tools/pure'

// Why an event failed, in the words the page shows after "failed verification:"; null when it
// passed. verifyEvent recomputes the id and checks the signature: the id is hashed a second
// time only for a failure, to name its cause (a 10,000-member list is about 900 kB to hash).
export function whyInvalid(event, relayKey) {
  if (!validateEvent(event)) return 'not a well-formed Nostr event'
  if (!verifyEvent(event)) return getEventHash(event) !== event.id ? 'bad id' : 'bad signature'
  if (event.pubkey !== relayKey) return "not signed by this relay's key"
  return null
}
