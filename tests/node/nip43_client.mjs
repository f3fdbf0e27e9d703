// A NIP-43 client made of nostr-tools, for tests/python/test_relay_nostr_tools.py.
//
//   node nip43_client.mjs -      the scenario JSON as the first line of stdin (its secret keys
//                                never on argv); later lines answer "pause"
//
// The scenario: {"url": ws://..., "relayPubkey": hex, "keys": {name: secret hex}, "steps": [...]}.
// Each step is one thing a client does, on a named connection ("conn"); every observation is
// printed as one JSON line on stdout: {"step": <index>, "op": ..., ...}. Steps:
//
//   {"op": "info", "label": L}                   the NIP-11 document (nostr-tools' nip11)
//   {"op": "connect", "conn": C}                 Relay.connect(url)
//   {"op": "auth", "conn": C, "as": K}           relay.auth(signer of K) once the challenge came;
//                                                "relayTag" replaces the relay tag nostr-tools wrote
//   {"op": "req", "conn": C, "label": L, "filters": [...], "keep": false}
//        relay.subscribe: prints "event" (with verify: nostr-tools' own verifyEvent on a fresh
//        copy) or "invalid_event" for each event, then "eose" or "closed" (with the reason).
//        nostr-tools reports an event as invalid when its signature does not verify or when it
//        does not match the subscription's filters (its own matchFilters: ids, kinds, authors,
//        since, until and every "#x" tag filter, e.g. "#d" of a role definition).
//        Without keep the subscription is closed after EOSE; with it, later events keep coming.
//   {"op": "wait", "label": L, "count": N, "settleMs": 300}
//        wait until subscription L has N events after its EOSE, then settleMs more.
//   {"op": "publish", "conn": C, "as": K, "kind": n, "tags": [...], "content": "",
//    "createdAtOffset": 0, "tamper": false}
//        finalizeEvent, then relay.publish: prints "ok" with {ok, reason, id}. With tamper the
//        content is changed after signing (so the id and signature no longer match). With
//        "again": L, the event of publish step L is sent once more, as it is (a client that
//        AUTHs after auth-required: and retries, as Jumble does).
//   {"op": "pause"}                              print "pause", wait for one line on stdin
//
// Every step but connect has a "label", repeated in the lines it prints (an event's line has
// its subscription's label), and every line names the index of the step that was running.
//
// A tag value "@L" is replaced by the claim code of the invite (kind 28935) received on
// subscription L. A relay.publish or auth that times out prints ok false with the timeout.

import { createInterface } from 'node:readline'
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent, getPublicKey, verifyEvent } from 'nostr-tools/pure'
import { hexToBytes } from 'nostr-tools/utils'
import { fetchRelayInformation } from 'nostr-tools/nip11'

useWebSocketImplementation(WebSocket)

let currentStep = null // index of the step running, named in every line it prints
let stdinLines = null // the lines of stdin after the scenario's, read by "pause"

function print(obj) {
  process.stdout.write(JSON.stringify({ step: currentStep, ...obj }) + '\n')
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function readScenario() {
  if (process.argv[2] !== '-') throw new Error('usage: node nip43_client.mjs - (the scenario on stdin)')
  stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  const line = await stdinLines.next()
  if (line.done) throw new Error('no scenario on stdin')
  return JSON.parse(line.value)
}

const scenario = await readScenario()
const secrets = Object.fromEntries(
  Object.entries(scenario.keys).map(([name, hex]) => [name, hexToBytes(hex)]),
)
const relays = {} // conn name -> Relay
const subs = {} // label -> { events: [...], live: count after EOSE, eosed, closed }
const published = {} // publish label -> the event sent

// nostr-tools marks events it verified; a JSON copy is a fresh object it must verify anew.
const verifyFresh = (event) => verifyEvent(JSON.parse(JSON.stringify(event)))

function resolveTags(tags) {
  return tags.map((tag) =>
    tag.map((value) => {
      if (typeof value !== 'string' || !value.startsWith('@')) return value
      const invite = subs[value.slice(1)].events.find((ev) => ev.kind === 28935)
      return invite.tags.find((t) => t[0] === 'claim')[1]
    }),
  )
}

async function waitFor(predicate, ms, what) {
  const deadline = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

const steps = {
  async info(step) {
    print({ op: 'info', label: step.label, document: await fetchRelayInformation(scenario.url) })
  },

  async connect(step) {
    const relay = (relays[step.conn] = await Relay.connect(scenario.url))
    // nostr-tools logs a NOTICE with console.debug, on stdout: print it as an observation.
    relay.onnotice = (message) => print({ op: 'notice', conn: step.conn, message })
    print({ op: 'connected', conn: step.conn, url: relay.url })
  },

  async auth(step) {
    const relay = relays[step.conn]
    await waitFor(() => relay.challenge, 5000, 'the AUTH challenge')
    const signer = async (template) => {
      if (step.relayTag) template.tags = template.tags.map((t) => (t[0] === 'relay' ? ['relay', step.relayTag] : t))
      return finalizeEvent(template, secrets[step.as])
    }
    try {
      const reason = await relay.auth(signer)
      print({ op: 'auth', label: step.label, as: step.as, ok: true, reason, challenge: relay.challenge })
    } catch (err) {
      print({ op: 'auth', label: step.label, as: step.as, ok: false, reason: err.message })
    }
  },

  async req(step) {
    const state = (subs[step.label] = { events: [], live: 0, eosed: false, closed: null })
    let sub
    const done = new Promise((resolve) => {
      sub = relays[step.conn].subscribe(step.filters, {
        label: step.label,
        eoseTimeout: 30000, // so that oneose means the relay's EOSE, not nostr-tools' timer
        onevent(event) {
          state.events.push(event)
          if (state.eosed) state.live++
          print({ op: 'event', label: step.label, live: state.eosed, verify: verifyFresh(event), event })
        },
        oninvalidevent(event) {
          print({ op: 'invalid_event', label: step.label, event })
        },
        oneose() {
          state.eosed = true
          print({ op: 'eose', label: step.label })
          resolve()
        },
        onclose(reason) {
          if (state.closedByUs) return
          state.closed = reason
          print({ op: 'closed', label: step.label, reason })
          resolve()
        },
      })
    })
    await done
    if (!step.keep && !state.closed) {
      state.closedByUs = true
      sub.close()
    }
  },

  async wait(step) {
    const state = subs[step.label]
    await waitFor(() => state.live >= step.count, step.timeoutMs ?? 10000, `${step.count} events on ${step.label}`)
    await sleep(step.settleMs ?? 300)
    print({ op: 'waited', label: step.label, live: state.live })
  },

  async publish(step) {
    const event = step.again
      ? published[step.again]
      : finalizeEvent(
          {
            kind: step.kind,
            created_at: Math.floor(Date.now() / 1000) + (step.createdAtOffset ?? 0),
            tags: resolveTags(step.tags ?? []),
            content: step.content ?? '',
          },
          secrets[step.as],
        )
    if (step.tamper) event.content += ' (changed after signing)'
    published[step.label] = event
    try {
      const reason = await relays[step.conn].publish(event)
      print({ op: 'ok', label: step.label, as: step.as, kind: event.kind, id: event.id, ok: true, reason })
    } catch (err) {
      print({ op: 'ok', label: step.label, as: step.as, kind: event.kind, id: event.id, ok: false, reason: err.message })
    }
  },

  async pause(step) {
    print({ op: 'pause', label: step.label })
    const line = await stdinLines.next()
    if (line.done) throw new Error('stdin closed during a pause')
  },
}

const pubkeys = Object.fromEntries(Object.entries(secrets).map(([name, sk]) => [name, getPublicKey(sk)]))
print({ op: 'start', pubkeys })
try {
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
  for (const state of Object.values(subs)) state.closedByUs = true
  for (const relay of Object.values(relays)) relay.close()
  // nostr-tools' timers (EOSE, publish) would keep Node alive: stop here, output written.
  process.exit()
}
