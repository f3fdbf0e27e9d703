// The page talks to its relay as any Nostr client does: NIP-11 for the relay key, then one
// websocket to the same origin whose subscriptions stay open (and are sent again after a
// reconnect), so every list the relay commits reaches the page without a reload.

// The relay's NIP-11 document (same origin, so connect-src 'self' allows it).
export async function relayInformation() {
  const answer = await fetch('/', { headers: { Accept: 'application/nostr+json' } })
  if (!answer.ok) throw new Error(`NIP-11 answered ${answer.status}`)
  return answer.json()
}

export function sameOriginRelayUrl(location) {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`
}

const RETRY_FIRST_MS = 1000
const RETRY_MAX_MS = 30000

// One websocket; subscribe(id, filter, onEvent, onEose) keeps a REQ open across reconnects.
export class RelayConnection {
  constructor(url, { onOpen = () => {}, onClose = () => {} } = {}) {
    this.url = url
    this.subscriptions = new Map()
    this.onOpen = onOpen
    this.onClose = onClose
    this.retryMs = RETRY_FIRST_MS
    this.socket = null
  }

  connect() {
    const socket = new WebSocket(this.url)
    this.socket = socket
    socket.addEventListener('open', () => {
      this.retryMs = RETRY_FIRST_MS
      for (const [id, sub] of this.subscriptions) this.send(['REQ', id, sub.filter])
      this.onOpen()
    })
    socket.addEventListener('message', (message) => this.receive(message.data))
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return
      this.onClose()
      setTimeout(() => this.connect(), this.retryMs)
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS)
    })
  }

  send(message) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message))
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
    const sub = this.subscriptions.get(id)
    if (verb === 'EVENT' && sub && event && typeof event === 'object') sub.onEvent(event)
    else if (verb === 'EOSE' && sub) sub.onEose()
    // AUTH (the challenge at connect), NOTICE and CLOSED need nothing from a visitor's page.
  }
}
