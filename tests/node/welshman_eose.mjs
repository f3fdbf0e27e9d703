// How long an anonymous welshman reader waits for its answer from a relay that sends an AUTH
// challenge when the connection opens (docs/relay.md, "Clients").
//
//   node welshman_eose.mjs ws://localhost:7447 [runs, default 5]
//
// Each run opens a fresh connection per reader and asks for the relay's member list
// ({kinds: [13534], limit: 1}) in three ways:
//   - welshman-anonymous: @welshman/net's request({autoClose, signal: 3 s}) as Flotilla's
//     reads do it (a logged-out visitor, or a relay its auth policy does not AUTH to);
//   - welshman-auth: the same, with a socket policy that AUTHs to the challenge (an ephemeral
//     key), as Flotilla does for the spaces a person is in;
//   - welshman-no-challenge: the anonymous reader with a socket policy that drops the relay's
//     AUTH message before welshman sees it: what it would get from a relay that sent none;
//   - nostr-tools: Relay.connect and subscribe, without AUTH.
// It prints one JSON line per reader and run ({reader, run, firstEventMs, eoseMs, doneMs}: ms
// from the request to the first event, to the EOSE reaching the caller, null when it never
// does, and to the answer being complete), then the medians per reader. Then, once each,
// Flotilla's join (attemptRelayAccess: attemptAuth, then a 28934 with ["claim", ""] and
// ["-"], welshman's default 10 s publish timeout) by a new key, with the relay's challenge and
// with it dropped as above: {join, authStatus, authMs, status, detail, ms}.

import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { on, poll } from '@welshman/lib'
import {
  Pool,
  Socket,
  SocketEvent,
  SocketStatus,
  defaultSocketPolicies,
  makeSocketPolicyAuth,
  publish,
  request,
} from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { RELAY_JOIN, makeEvent, normalizeRelayUrl } from '@welshman/util'

useWebSocketImplementation(WebSocket)
console.log = (...args) => console.error(...args)

const url = normalizeRelayUrl(process.argv[2] ?? 'ws://localhost:7447')
const runs = Number(process.argv[3] ?? 5)
const filter = { kinds: [13534], limit: 1 }
const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null
}

const dropChallenge = (socket) =>
  on(socket, SocketEvent.Receiving, (message) => {
    if (message[0] === 'AUTH') socket._recvQueue.remove(message)
  })

async function welshman(mode) {
  const signer = Nip01Signer.ephemeral()
  const extra = {
    anonymous: [],
    auth: [makeSocketPolicyAuth({ sign: (t) => signer.sign(t) })],
    'no-challenge': [dropChallenge],
  }[mode]
  const policies = [...extra, ...defaultSocketPolicies]
  const pool = new Pool({ makeSocket: (u) => new Socket(u, policies) })
  const started = Date.now()
  let firstEventMs = null
  let eoseMs = null
  await request({
    relays: [url],
    filters: [filter],
    autoClose: true,
    signal: AbortSignal.timeout(3000),
    context: { pool },
    onEvent: () => (firstEventMs ??= Date.now() - started),
    onEose: () => (eoseMs ??= Date.now() - started),
  })
  const doneMs = Date.now() - started
  pool.clear()
  return { firstEventMs, eoseMs, doneMs }
}

async function nostrTools() {
  const started = Date.now()
  const relay = await Relay.connect(url)
  let firstEventMs = null
  let eoseMs = null
  await new Promise((resolve) => {
    const sub = relay.subscribe([filter], {
      onevent: () => (firstEventMs ??= Date.now() - started),
      oneose: () => {
        eoseMs = Date.now() - started
        sub.close()
        resolve()
      },
    })
  })
  relay.close()
  return { firstEventMs, eoseMs, doneMs: eoseMs }
}

const readers = {
  'welshman-anonymous': () => welshman('anonymous'),
  'welshman-auth': () => welshman('auth'),
  'welshman-no-challenge': () => welshman('no-challenge'),
  'nostr-tools': nostrTools,
}
async function flotillaJoin(policies) {
  const signer = Nip01Signer.ephemeral()
  const pool = new Pool({ makeSocket: (u) => new Socket(u, [...policies, ...defaultSocketPolicies]) })
  const socket = pool.get(url)
  socket.attemptToOpen()
  await poll({ signal: AbortSignal.timeout(3000), condition: () => socket.status === SocketStatus.Open })
  const started = Date.now()
  await socket.auth.attemptAuth((t) => signer.sign(t))
  const authMs = Date.now() - started
  const event = await signer.sign(makeEvent(RELAY_JOIN, { tags: [['claim', ''], ['-']] }))
  const result = (await publish({ relays: [url], event, context: { pool } }))[url]
  pool.clear()
  return { authStatus: socket.auth.status, authMs, status: result.status, detail: result.detail, ms: Date.now() - started }
}

const results = {}
for (let run = 0; run < runs; run++) {
  for (const [reader, measure] of Object.entries(readers)) {
    const line = { reader, run, ...(await measure()) }
    ;(results[reader] ??= []).push(line)
    process.stdout.write(JSON.stringify(line) + '\n')
  }
}
for (const [reader, lines] of Object.entries(results)) {
  const med = (key) => median(lines.map((l) => l[key]))
  const eoseSeen = lines.filter((l) => l.eoseMs !== null).length
  process.stdout.write(
    JSON.stringify({
      reader,
      runs: lines.length,
      medianFirstEventMs: med('firstEventMs'),
      medianDoneMs: med('doneMs'),
      eoseSeen,
    }) + '\n',
  )
}
for (const [join, policies] of Object.entries({ 'with-challenge': [], 'challenge-dropped': [dropChallenge] })) {
  process.stdout.write(JSON.stringify({ join, ...(await flotillaJoin(policies)) }) + '\n')
}
process.exit()
