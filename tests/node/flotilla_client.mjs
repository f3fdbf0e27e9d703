// Flotilla's relay-access flows made of its own libraries (@welshman/util, net, signer, lib
// 0.8.15), for tests/python/test_relay_clients.py.
//
//   node flotilla_client.mjs -      the scenario JSON as the first line of stdin (keys stay off
//                                   argv); later lines of stdin answer "pause" steps
//
// The scenario: {"url": ws://..., "keys": {name: secret hex}, "steps": [...]}. Every observation
// is one JSON line on stdout: {"step": <index>, "op": ..., "label": ..., ...}. Each key name has
// its own welshman Pool (one socket to the relay, as one Flotilla session has), so AUTH as one
// person never leaks into another's requests. Steps:
//
//   {"op": "manage", "label": L, "as": K, "method": m, "params": [...]}
//        one NIP-86 call as @welshman/app's manageRelay makes it: u is the relay URL with ws
//        replaced by http, makeHttpAuth(u, "POST", JSON.stringify(request)) signed by K's
//        Nip01Signer, sendManagementRequest(u, request, event). Prints "manage" with the JSON
//        answer and the NIP-98 event's id and created_at.
//   {"op": "invite", "label": L, "as": K}
//        Flotilla's invite link: supportedmethods twice at once (two of its stores asked for it;
//        within one second, so both are one and the same NIP-98 event); when createclaim
//        is among them, listclaims, and its first code, or else createclaim [randomId()]. Prints
//        "manage" for each call, then "invite" with the code and the link
//        https://app.flotilla.social/join?r=<relay>&c=<code>.
//   {"op": "join", "label": L, "as": K, "claim": code | "@L" | null, "protect": true}
//        Flotilla's attemptRelayAccess: open K's socket (3 s), socket.auth.attemptAuth (it waits
//        800 ms for the relay's challenge), then publish a RELAY_JOIN (28934) with
//        ["claim", code] (none when claim is null) and ["-"] when protect. "@L" is the code of
//        invite step L. Prints "join" with the AUTH status and details, the publish status and
//        detail, and "message": what Flotilla tells the person (null when it joined).
//   {"op": "profile", "label": L, "as": K, "content": {...}, "createdAt": t}
//        what Flotilla's joinRelay does next (broadcastUserData): K's kind 0 (PROFILE) published
//        on K's socket, as it was made (createdAt: its time, long before the join). Prints
//        "profile" with the event, the publish status and detail.
//   {"op": "leave", "label": L, "as": K}
//        welshman's RELAY_LEAVE (28936) as Flotilla's publishLeaveRequest makes it: no tags.
//   {"op": "read", "label": L, "as": K | null, "filters": [...], "timeoutMs": 3000}
//        welshman's request({autoClose, signal: timeout}) on K's socket (null: an anonymous
//        reader of its own): prints "read" with the events, eoseMs (null when no EOSE reached
//        the caller) and doneMs.
//   {"op": "pause", "label": L}                      print "pause", wait for a line on stdin

import { createInterface } from 'node:readline'
import { poll, randomId, sleep } from '@welshman/lib'
import {
  PROFILE,
  RELAY_JOIN,
  RELAY_LEAVE,
  displayRelayUrl,
  makeEvent,
  makeHttpAuth,
  normalizeRelayUrl,
  sendManagementRequest,
} from '@welshman/util'
import { AuthStatus, Pool, PublishStatus, SocketStatus, publish, request } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'

const PLATFORM_URL = 'https://app.flotilla.social' // Flotilla's PLATFORM_URL, the invite link's base

// welshman reports a failed NIP-86 fetch with console.log; stdout carries only our JSON lines.
console.log = (...args) => console.error(...args)

let currentStep = null
const print = (obj) => process.stdout.write(JSON.stringify({ step: currentStep, ...obj }) + '\n')

const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
async function nextLine() {
  const line = await stdinLines.next()
  if (line.done) throw new Error('stdin closed')
  return line.value
}

if (process.argv[2] !== '-') throw new Error('usage: node flotilla_client.mjs - (scenario on stdin)')
const scenario = JSON.parse(await nextLine())
const url = normalizeRelayUrl(scenario.url) // what Flotilla keeps: ws://host:port/
const signers = Object.fromEntries(
  Object.entries(scenario.keys).map(([name, secret]) => [name, Nip01Signer.fromSecret(secret)]),
)
const pools = {} // key name (or an anonymous reader's label) -> Pool
const invites = {} // invite label -> code
const poolOf = (name) => (pools[name] ??= new Pool())

// @welshman/app's manageRelay at 0.8.15, whose three lines need a signer store of the app.
const httpUrl = url.replace(/^ws/, 'http')

async function authFor(signer, rpc) {
  return signer.sign(await makeHttpAuth(httpUrl, 'POST', JSON.stringify(rpc)))
}

// `authEvent`: one signed already (welshman signs the same event for two asks within one
// second, since it dates events in whole seconds).
async function manage(step, method, params = [], authEvent = null) {
  const rpc = { method, params }
  authEvent = authEvent ?? (await authFor(signers[step.as], rpc))
  const response = await sendManagementRequest(httpUrl, rpc, authEvent)
  print({
    op: 'manage',
    label: step.label,
    method,
    params,
    response,
    authId: authEvent.id,
    authCreatedAt: authEvent.created_at,
  })
  return response
}

// Flotilla's attemptRelayAccess / deriveRelayAuthError reading of a refused join.
function flotillaMessage(error) {
  if (!error) return null
  if (error.includes('invite code')) return 'join request rejected'
  if (error.includes('claim')) return 'This space requires an invite code'
  return error.replace(/^\w+: /, '')
}

async function publishOn(name, event) {
  const results = await publish({ relays: [url], event, context: { pool: poolOf(name) }, timeout: 5000 })
  return results[url]
}

const steps = {
  async manage(step) {
    await manage(step, step.method, step.params ?? [])
  },

  async invite(step) {
    // Two of Flotilla's stores asked at once (the Flotilla of early 2026), within one second:
    // welshman signs one and the same NIP-98 event for both.
    const auth = await authFor(signers[step.as], { method: 'supportedmethods', params: [] })
    const [first] = await Promise.all([
      manage(step, 'supportedmethods', [], auth),
      manage(step, 'supportedmethods', [], auth),
    ])
    let claim = ''
    if ((first.result ?? []).includes('createclaim')) {
      const listed = await manage(step, 'listclaims')
      claim = listed.result?.[0] ?? ''
      if (!claim) {
        const candidate = randomId()
        const created = await manage(step, 'createclaim', [candidate])
        if (created.result !== undefined) claim = candidate
      }
    }
    invites[step.label] = claim
    const params = new URLSearchParams({ r: displayRelayUrl(url), c: claim }).toString()
    print({ op: 'invite', label: step.label, claim, link: `${PLATFORM_URL}/join?${params}` })
  },

  async join(step) {
    const signer = signers[step.as]
    const socket = poolOf(step.as).get(url)
    socket.attemptToOpen()
    await poll({ signal: AbortSignal.timeout(3000), condition: () => socket.status === SocketStatus.Open })
    if (socket.status !== SocketStatus.Open) {
      print({ op: 'join', label: step.label, message: 'Failed to connect' })
      return
    }
    const started = Date.now()
    await socket.auth.attemptAuth((template) => signer.sign(template))
    const auth = { status: socket.auth.status, details: socket.auth.details ?? null, ms: Date.now() - started }
    if (![AuthStatus.None, AuthStatus.Ok].includes(socket.auth.status)) {
      print({ op: 'join', label: step.label, auth, message: `Failed to authenticate (${auth.details})` })
      return
    }
    let claim = step.claim
    if (typeof claim === 'string' && claim.startsWith('@')) claim = invites[claim.slice(1)]
    const tags = claim === null || claim === undefined ? [] : [['claim', claim]]
    if (step.protect) tags.push(['-'])
    const event = await signer.sign(makeEvent(RELAY_JOIN, { tags }))
    const result = await publishOn(step.as, event)
    const error = result.status === PublishStatus.Success ? '' : result.detail
    print({
      op: 'join',
      label: step.label,
      auth,
      tags,
      id: event.id,
      status: result.status,
      detail: result.detail,
      message: flotillaMessage(error),
    })
  },

  async profile(step) {
    const template = makeEvent(PROFILE, {
      content: JSON.stringify(step.content),
      created_at: step.createdAt,
    })
    const event = await signers[step.as].sign(template)
    const result = await publishOn(step.as, event)
    print({ op: 'profile', label: step.label, event, status: result.status, detail: result.detail })
  },

  async leave(step) {
    const event = await signers[step.as].sign(makeEvent(RELAY_LEAVE))
    const result = await publishOn(step.as, event)
    print({ op: 'leave', label: step.label, tags: event.tags, status: result.status, detail: result.detail })
  },

  async read(step) {
    const started = Date.now()
    let eoseMs = null
    const events = await request({
      relays: [url],
      filters: step.filters,
      autoClose: true,
      signal: AbortSignal.timeout(step.timeoutMs ?? 3000),
      context: { pool: poolOf(step.as ?? `reader:${step.label}`) },
      onEose: () => {
        eoseMs ??= Date.now() - started
      },
    })
    print({ op: 'read', label: step.label, events, eoseMs, doneMs: Date.now() - started })
  },

  async pause(step) {
    print({ op: 'pause', label: step.label })
    await nextLine()
  },
}

try {
  const pubkeys = {}
  for (const [name, signer] of Object.entries(signers)) pubkeys[name] = await signer.getPubkey()
  print({ op: 'start', url, pubkeys })
  for (const [index, step] of scenario.steps.entries()) {
    currentStep = index
    await steps[step.op](step)
  }
  currentStep = null
  print({ op: 'done' })
} catch (err) {
  print({ op: 'error', message: String(err?.stack ?? err) })
  process.exitCode = 1
} finally {
  for (const pool of Object.values(pools)) pool.clear()
  // welshman's socket policies keep intervals: stop here, output written.
  process.exit()
}
