// NIP-86 relay management over HTTP with a NIP-98 Authorization header made by nostr-tools'
// nip98 module, for tests/python/test_relay_nip86.py.
//
//   node nip86_client.mjs '<request JSON>'     (or the JSON on stdin when there is no argument)
//   node nip86_client.mjs --serve              one request JSON a line on stdin, each answered
//                                              as below (a test session's one node process)
//
// The JSON is one request description, or an array of them sent one after another. Each:
//
//   {"url": "http://127.0.0.1:PORT", "secret": hex, "method": "allowpubkey", "params": [...]}
//
// The body sent is JSON.stringify({method, params}); the header is nip98.getToken(u, "POST",
// signer, true, {method, params}) (getToken hashes JSON.stringify of the object it is given,
// so the payload tag is the sha256 of exactly the body sent). Options that spoil the request:
//
//   "no_auth": true              send no Authorization header
//   "authorization": "..."       send this Authorization header as it is (no token is made)
//   "scheme": "Basic "           replace getToken's "Nostr " with this
//   "created_at_offset": s       the event's created_at moved by s seconds (before signing)
//   "kind": n                    the event's kind (before signing) instead of 27235
//   "u": "..."                   the u tag (default: url)
//   "http_method": "GET"         the method tag (default: POST)
//   "payload_body": x            the payload tag hashes x instead of the body: a string is
//                                hashed as it is (its UTF-8), anything else as JSON.stringify(x)
//   "no_payload": true           no payload tag at all
//   "tamper_sig": true           one hex digit of the signature changed after signing
//   "repeat": N                  send the same request (same header, same body) N times
//   "content_type": "..."        the Content-Type (default: application/nostr+json+rpc)
//   "no_content_type": true      no Content-Type header
//   "raw_body": "..."            send this text as the body instead of JSON of method/params
//                                (the payload tag is then its sha256, unless payload_body says)
//
// One JSON line per response on stdout: {"request": i, "attempt": j, "status": n, "body":
// <parsed JSON, or the text when it is not JSON>, "headers": {...}, "authorization": <the
// header sent, or null>, "event": <the 27235 event in that header, or null>}. Then {"done": true}.
// An error: {"error": "..."} (then, with --serve, {"done": true}); exit code 1 without it.

import { createHash } from 'node:crypto'
import { getToken, unpackEventFromToken } from 'nostr-tools/nip98'
import { finalizeEvent } from 'nostr-tools/pure'
import { hexToBytes } from 'nostr-tools/utils'

const RPC_CONTENT_TYPE = 'application/nostr+json+rpc'

async function readInput() {
  if (process.argv[2]) return JSON.parse(process.argv[2])
  let text = ''
  for await (const chunk of process.stdin) text += chunk
  return JSON.parse(text)
}

const sha256Hex = (text) => createHash('sha256').update(text, 'utf8').digest('hex')

async function authorization(req, bodyText, rpc) {
  if (req.authorization !== undefined) return req.authorization
  const secret = hexToBytes(req.secret)
  const signer = async (template) => {
    if (req.created_at_offset) template.created_at += req.created_at_offset
    if (req.kind !== undefined) template.kind = req.kind
    let tags = template.tags
    if (req.no_payload) {
      tags = tags.filter((t) => t[0] !== 'payload')
    } else if (req.payload_body !== undefined && typeof req.payload_body === 'string') {
      tags = tags.map((t) => (t[0] === 'payload' ? ['payload', sha256Hex(req.payload_body)] : t))
    } else if (req.payload_body === undefined && req.raw_body !== undefined) {
      tags = tags.map((t) => (t[0] === 'payload' ? ['payload', sha256Hex(bodyText)] : t))
    }
    template.tags = tags
    const event = finalizeEvent(template, secret)
    if (req.tamper_sig) {
      const last = event.sig.at(-1)
      event.sig = event.sig.slice(0, -1) + (last === '0' ? '1' : '0')
    }
    return event
  }
  // What getToken hashes: JSON.stringify of this. For a raw body (or a payload_body string)
  // the signer above replaces the tag with the sha256 of the text itself.
  let payload = rpc
  if (req.payload_body !== undefined && typeof req.payload_body !== 'string') payload = req.payload_body
  const token = await getToken(req.u ?? req.url, req.http_method ?? 'POST', signer, true, payload)
  return req.scheme !== undefined ? req.scheme + token.slice('Nostr '.length) : token
}

async function send(req, index) {
  const rpc = { method: req.method, params: req.params ?? [] }
  const bodyText = req.raw_body !== undefined ? req.raw_body : JSON.stringify(rpc)
  // A string body would get fetch's text/plain; bytes get no Content-Type at all.
  const headers = req.no_content_type ? {} : { 'Content-Type': req.content_type ?? RPC_CONTENT_TYPE }
  const sent = req.no_content_type ? new TextEncoder().encode(bodyText) : bodyText
  let event = null
  if (!req.no_auth) {
    headers.Authorization = await authorization(req, bodyText, rpc)
    try {
      event = await unpackEventFromToken(headers.Authorization.replace(/^\S+ /, 'Nostr '))
    } catch {
      event = null
    }
  }
  for (let attempt = 0; attempt < (req.repeat ?? 1); attempt++) {
    const response = await fetch(req.url, { method: 'POST', headers, body: sent })
    const text = await response.text()
    let body
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    process.stdout.write(
      JSON.stringify({
        request: index,
        attempt,
        status: response.status,
        body,
        headers: Object.fromEntries(response.headers.entries()),
        authorization: headers.Authorization ?? null,
        event,
      }) + '\n',
    )
  }
}

async function answer(input) {
  const requests = Array.isArray(input) ? input : [input]
  for (const [index, req] of requests.entries()) await send(req, index)
}

const done = () => process.stdout.write(JSON.stringify({ done: true }) + '\n')
const failed = (err) => process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }) + '\n')

if (process.argv[2] === '--serve') {
  const { createInterface } = await import('node:readline')
  for await (const line of createInterface({ input: process.stdin })) {
    try {
      await answer(JSON.parse(line))
    } catch (err) {
      failed(err)
    }
    done()
  }
} else {
  try {
    await answer(await readInput())
    done()
  } catch (err) {
    failed(err)
    process.exitCode = 1
  }
}
