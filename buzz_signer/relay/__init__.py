"""buzz-relay: the relay front that Nostr clients talk to for membership (SPEC section 7)."""
