// NIP-44 v2 with nostr-tools, for tests/python/test_nip44.py: opens what RelayKey.seal made and
// seals texts for RelayKey.unseal to open, with the relay key's own conversation key.
//
//   node nip44_roundtrip.mjs < request.json
//
// The request comes on stdin only (it holds a secret key, which must never be in argv):
//   {"secret": hex, "pubkey": hex, "open": [payload, ...], "seal": [text, ...]}
// One JSON line on stdout answers it:
//   {"opened": [{"ok": true, "text": ...} | {"ok": false, "error": ...}, ...], "sealed": [payload, ...]}

import { readFileSync } from 'node:fs'
import { decrypt, encrypt, getConversationKey } from 'nostr-tools/nip44'
import { hexToBytes } from 'nostr-tools/utils'

const request = JSON.parse(readFileSync(0, 'utf8'))
const key = getConversationKey(hexToBytes(request.secret), request.pubkey)

const opened = request.open.map((payload) => {
  try {
    return { ok: true, text: decrypt(payload, key) }
  } catch (err) {
    return { ok: false, error: String(err.message) }
  }
})
const sealed = request.seal.map((text) => encrypt(text, key))

process.stdout.write(JSON.stringify({ opened, sealed }) + '\n')
