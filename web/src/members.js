// The members of a verified 13534 list, and how one member is drawn in #member-list.
import { npubEncode } from 'nostr-tools/nip19'
import { h } from './dom.js'
import { personNodes } from './people.js'

// Each member's npub, kept from one list to the next: a new list mostly names the members of
// the last, and encoding 10,000 keys again is most of the time a list takes to show.
let npubs = new Map()

// ["member", <pubkey>, <base role>, <defined roles held>...] for each member (SPEC sections
// 2 and 6); the npub is computed when the list arrives so that search and paging stay cheap.
export function membersOfList(event) {
  // Who runs the community first: the owner, then the admins, then the members, each in the
  // list's own order (one pass, however many members).
  const ranked = [[], [], []]
  const known = new Map()
  for (const tag of event.tags) {
    if (tag[0] !== 'member' || typeof tag[1] !== 'string') continue
    const pubkey = tag[1]
    const npub = npubs.get(pubkey) ?? npubEncode(pubkey)
    known.set(pubkey, npub)
    const baseRole = tag[2] ?? 'member'
    ranked[RANKS.get(baseRole) ?? 2].push({ pubkey, npub, baseRole, roles: tag.slice(3) })
  }
  npubs = known // only the current members' keys: the cache never outgrows the list
  return ranked.flat()
}

const RANKS = new Map([
  ['owner', 0],
  ['admin', 1],
])

// The count in the reader's locale (10,000 or 10.000 or 10 000).
export function countText(count) {
  return count === 1 ? '1 member' : `${count.toLocaleString()} members`
}

// Text only (textContent), and the role's color as a CSS custom property set through the
// CSSOM, which the Content-Security-Policy allows where an inline style attribute is refused.
export function memberItem(member, roleBook) {
  const item = h('li', { class: 'member' })
  item.dataset.pubkey = member.pubkey
  item.append(...personNodes(member.pubkey, member.npub))
  item.append(' ', h('span', { class: 'base-role' }, member.baseRole))
  for (const id of member.roles) item.append(' ', roleBadge(id, roleBook))
  return item
}

// A defined role held: its label, in its 33534 color.
export function roleBadge(id, roleBook) {
  const role = roleBook.get(id)
  const badge = h('span', { class: 'role' }, role.label)
  badge.dataset.role = id
  if (role.hue !== null) {
    badge.classList.add('colored')
    badge.style.setProperty('--role-hue', String(role.hue))
  }
  return badge
}
