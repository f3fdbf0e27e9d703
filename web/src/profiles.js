// Members' own profiles (kind 0, SPEC section 8), as the relay keeps them. The page asks for
// the profiles of the people it draws, once each, when it first draws them (a page of 100
// members is one REQ), and keeps one subscription open for every profile stored from then on
// (limit 0: no stored ones); each is checked in the browser like every event the page shows,
// and the newest per person is kept. Names are text only, never markup.
import { verifyEvent } from 'nostr-tools/pure'
import { changed, community } from './community.js'

const KIND_PROFILE = 0
const AUTHORS_PER_REQ = 500 // the relay answers at most 500 events per filter
const NAME_LENGTH = 64 // a name longer than this is cut, with an ellipsis

const profiles = new Map() // pubkey -> { name, createdAt }
const asked = new Set() // the pubkeys whose stored profile was asked for
let drawn = [] // drawn since the last ask, not yet asked for
let listening = false
let served = true // false once the relay says it serves no profile (buzz-relay --no-profiles)

// The name a person gave themselves (display_name, else name), or null.
export function nameOf(pubkey) {
  return profiles.get(pubkey)?.name ?? null
}

// A person is being drawn (people.js): their stored profile is asked for at the end of this
// turn, together with everyone else drawn in it.
export function drawing(pubkey) {
  if (!served || asked.has(pubkey) || !community.relay) return
  asked.add(pubkey)
  if (drawn.length === 0) queueMicrotask(ask)
  drawn.push(pubkey)
}

function ask() {
  const relay = community.relay
  if (!listening) {
    listening = true
    relay.subscribe('profiles', { kinds: [KIND_PROFILE], limit: 0 }, onProfile)
  }
  const authors = drawn
  drawn = []
  for (let i = 0; i < authors.length; i += AUTHORS_PER_REQ) {
    const filter = { kinds: [KIND_PROFILE], authors: authors.slice(i, i + AUTHORS_PER_REQ) }
    relay.requestOnce(filter).then(
      ({ events, closed }) => {
        if (closed?.startsWith('unsupported:')) served = false
        events.forEach(onProfile)
      },
      () => {
        for (const pubkey of filter.authors) asked.delete(pubkey) // asked again when drawn
      },
    )
  }
}

// Only the current members' names: one removed, or gone with a list, is forgotten (and asked
// for again should they come back and be drawn).
export function keepMembersOnly(members) {
  const current = new Set(members.map((m) => m.pubkey))
  let dropped = false
  for (const pubkey of profiles.keys()) {
    if (current.has(pubkey)) continue
    profiles.delete(pubkey)
    asked.delete(pubkey)
    dropped = true
  }
  if (dropped) changed('profiles')
}

// Profiles are checked a few milliseconds' worth at a time, between the page's other work: a
// signature check is a millisecond or more, and a page of 100 people checked in one go would
// hold the list, the desk and every click behind it. The parts are told of new names when
// the checking is done, or every REDRAW_MS while it goes on: each telling redraws every
// person on screen.
const SLICE_MS = 8
const REDRAW_MS = 250
const arrived = []
let checking = false
let renamed = false
let told = 0 // performance.now() of the last telling

function onProfile(event) {
  arrived.push(event)
  if (checking) return
  checking = true
  setTimeout(checkSome, 0)
}

function checkSome() {
  const until = performance.now() + SLICE_MS
  while (arrived.length && performance.now() < until) renamed = take(arrived.shift()) || renamed
  const now = performance.now()
  if (renamed && (arrived.length === 0 || now - told >= REDRAW_MS)) {
    renamed = false
    told = now
    changed('profiles')
  }
  if (arrived.length) setTimeout(checkSome, 0)
  else checking = false
}

// Keeps the profile when it is the person's newest and their own; true when their name changed.
function take(event) {
  if (event.kind !== KIND_PROFILE || typeof event.pubkey !== 'string') return false
  const known = profiles.get(event.pubkey)
  if (known && known.createdAt >= event.created_at) return false
  if (!verifyEvent(event)) return false // not the person's own words: no name
  const name = nameIn(event.content)
  profiles.set(event.pubkey, { name, createdAt: event.created_at })
  return name !== (known?.name ?? null)
}

// NIP-01 and NIP-24: content is JSON; display_name first, then name; a string, trimmed, with
// no control character, not empty.
function nameIn(content) {
  let fields
  try {
    fields = JSON.parse(content)
  } catch {
    return null
  }
  if (!fields || typeof fields !== 'object') return null
  for (const field of ['display_name', 'name']) {
    const value = fields[field]
    if (typeof value !== 'string') continue
    const text = value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim()
    if (text) return text.length > NAME_LENGTH ? `${text.slice(0, NAME_LENGTH - 1)}…` : text
  }
  return null
}
