// The page talks to its relay as any Nostr client does: NIP-11 for the relay key, then one
// websocket to the same origin whose subscriptions stay open (and are sent again after a
// reconnect), so every list the relay commits reaches the page without a reload. A person who
// acts (joins, leaves) AUTHs on it (NIP-42) and publishes through it, each EVENT answered by
// the relay's OK; a REQ asked once (an invite, kind 28935) is answered by its events and EOSE,
// or by CLOSED.
import { makeAuthEvent } from 'nostr-tools/nip42'

// The relay's NIP-11 document (same origin, so connect-src 'self' allows it).
export async function relayInformation() {
  const answer = await fetch('/', { headers: { Accept: 'application/nostr+json' } })
  if (!answer.ok) throw new Error(`NIP-11 answered ${answer.status}`)
  return answer.json()
}

// The relay as clients name it, from the address the browser used: wss://host behind
// https, ws://host:port over http.
export function relayAddress(location) {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`
}

export function sameOriginRelayUrl(location) {
  return `${relayAddress(location)}/`
}

const RETRY_FIRST_MS = 1000
const RETRY_MAX_MS = 30000
const ANSWER_WAIT_MS = 15000 // for an OK, or for the socket to open

// What the relay answered to an EVENT or an AUTH: NIP-01's OK, its prefix split off.
export class Answer {
  constructor(accepted, message) {
    this.accepted = accepted
    this.message = message
    const colon = message.indexOf(':')
    this.prefix = colon > 0 ? message.slice(0, colon) : ''
  }
}

// One websocket; subscribe(id, filter, onEvent, onEose) keeps a REQ open across reconnects.
export class RelayConnection {
  constructor(url, { onOpen = () => {}, onClose = () => {} } = {}) {
    this.url = url
    this.subscriptions = new Map()
    this.onOpen = onOpen
    this.onClose = onClose
    this.retryMs = RETRY_FIRST_MS
    this.socket = null
    this.challenge = null // this connection's NIP-42 challenge
    this.authedAs = null // the pubkey this connection is AUTHed as
    this.waiting = new Map() // event id -> resolve(Answer)
    this.once = new Map() // subscription id -> {events, resolve} of a REQ asked once
    this.onceCount = 0
    this.opened = []
  }

  connect() {
    const socket = new WebSocket(this.url)
    this.socket = socket
    socket.addEventListener('open', () => {
      this.retryMs = RETRY_FIRST_MS
      for (const resolve of this.opened.splice(0)) resolve()
      for (const [id, sub] of this.subscriptions) this.send(['REQ', id, sub.filter])
      this.onOpen()
    })
    socket.addEventListener('message', (message) => this.receive(message.data))
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return
      this.challenge = null
      this.authedAs = null
      const closed = new Answer(false, 'error: the connection closed')
      for (const resolve of this.waiting.values()) resolve(closed)
      this.waiting.clear()
      for (const { events, resolve } of this.once.values()) {
        resolve({ events, closed: closed.message })
      }
      this.once.clear()
      this.onClose()
      setTimeout(() => this.connect(), this.retryMs)
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS)
    })
  }

  send(message) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message))
  }

  async whenOpen() {
    if (this.socket?.readyState === WebSocket.OPEN) return
    const opened = new Promise((resolve) => this.opened.push(resolve))
    await withTimeout(opened, 'the relay is not answering')
  }

  // Sends a signed event (EVENT, or AUTH when `verb` says so) and resolves the relay's OK.
  async sendEvent(event, verb = 'EVENT') {
    await this.whenOpen()
    const answer = new Promise((resolve) => this.waiting.set(event.id, resolve))
    this.send([verb, event])
    try {
      return await withTimeout(answer, 'the relay did not answer')
    } finally {
      this.waiting.delete(event.id)
    }
  }

  publish(event) {
    return this.sendEvent(event)
  }

  // AUTHs this connection as the signer's person (NIP-42), once per connection: `signAuth`
  // signs the template. Resolves the relay's Answer.
  async authenticate(pubkey, signAuth) {
    await this.whenOpen()
    if (this.authedAs === pubkey) return new Answer(true, '')
    if (!this.challenge) {
      const challenged = new Promise((resolve) => {
        this.onChallenge = resolve
      })
      await withTimeout(challenged, 'the relay sent no AUTH challenge')
    }
    const event = await signAuth(makeAuthEvent(this.url, this.challenge))
    const answer = await this.sendEvent(event, 'AUTH')
    if (answer.accepted) this.authedAs = pubkey
    return answer
  }

  // One REQ asked once: resolves {events, closed}, the events the relay sent before its EOSE
  // (closed null; the subscription is then closed) or before its CLOSED (closed: the reason,
  // as "prefix: words"). Never sent again after a reconnect.
  async requestOnce(filter) {
    await this.whenOpen()
    const id = `once-${++this.onceCount}`
    const answer = new Promise((resolve) => this.once.set(id, { events: [], resolve }))
    this.send(['REQ', id, filter])
    try {
      return await withTimeout(answer, 'the relay did not answer')
    } finally {
      this.once.delete(id)
    }
  }

  subscribe(id, filter, onEvent, onEose = () => {}) {
    this.subscriptions.set(id, { filter, onEvent, onEose })
    this.send(['REQ', id, filter])
  }

  receive(text) {
    let message
    try {
      message = JSON.parse(text)
    } catch {
      return
    }
    if (!Array.isArray(message)) return
    const [verb, id, event] = message
    const asked = this.once.get(id)
    if (asked) {
      if (verb === 'EVENT' && event && typeof event === 'object') asked.events.push(event)
      else if (verb === 'EOSE') {
        this.send(['CLOSE', id])
        asked.resolve({ events: asked.events, closed: null })
      } else if (verb === 'CLOSED') {
        asked.resolve({ events: asked.events, closed: String(message[2] ?? '') })
      }
      return
    }
    const sub = this.subscriptions.get(id)
    if (verb === 'EVENT' && sub && event && typeof event === 'object') sub.onEvent(event)
    else if (verb === 'EOSE' && sub) sub.onEose()
    else if (verb === 'OK' && this.waiting.has(id)) {
      this.waiting.get(id)(new Answer(message[2] === true, String(message[3] ?? '')))
    } else if (verb === 'AUTH' && typeof id === 'string') {
      this.challenge = id
      this.onChallenge?.()
      this.onChallenge = null
    }
    // NOTICE and CLOSED need nothing from the page.
  }
}

function withTimeout(promise, words) {
  let timer
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(words)), ANSWER_WAIT_MS)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}
