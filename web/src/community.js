// What the page knows of its community, shared by its parts (the member list, the person's
// own view, the desk): the relay key, the connection, the verified list on screen, the role
// definitions and the person logged in. A part that changes one calls changed(what); every
// part that watches is told ('list', 'roles' or 'me').
import { RoleBook } from './roles.js'

export const community = {
  relayKey: null, // NIP-11 `self`: the key every list and role definition must be signed by
  relay: null, // the RelayConnection to the page's own origin
  list: null, // the verified 13534 on screen, or null (none yet, or the last one failed)
  members: [], // its members, as membersOfList gives them
  roleBook: new RoleBook(),
  me: null, // the pubkey of the person logged in with their NIP-07 signer
}

const watchers = new Set()

export function watch(onChange) {
  watchers.add(onChange)
}

export function changed(what) {
  for (const onChange of watchers) onChange(what)
}

// The member `pubkey` in the list on screen, or null.
export function memberOf(pubkey) {
  return community.members.find((m) => m.pubkey === pubkey) ?? null
}
