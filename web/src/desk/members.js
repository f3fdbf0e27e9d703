// Members, by key: add someone who is not in the list yet (allowpubkey) or ban someone by their
// key, member or not (banpubkey); and the banned, each unbanned from their line. Acting on a
// member who is in the list happens from their row of the list (rows.js). What the typed key
// is now comes from the verified list on screen and the banned list.
import { community, memberOf } from '../community.js'
import { h } from '../dom.js'
import { personName } from '../people.js'
import {
  button,
  failure,
  field,
  keyInput,
  onAction,
  Pager,
  panel,
  personButton,
  personNode,
  say,
  typedPubkey,
} from './ui.js'

const METHODS = ['allowpubkey', 'banpubkey', 'unbanpubkey', 'listbannedpubkeys']

const unbanned = (pubkey) =>
  `Unbanned ${personName(pubkey)}: they may join again (they are not a member by this).`

export function membersPanel(desk) {
  if (!METHODS.some((m) => desk.may(m))) return null
  const { section, status } = panel(
    'desk-members',
    'Members',
    'Each member of the list below has a Manage button: remove, ban, base role and roles. ' +
      'Here: someone by their key.',
  )
  const key = keyInput('desk-member-key')
  const state = h('p', { id: 'desk-member-state', 'aria-live': 'polite' })
  if (desk.may('allowpubkey') || desk.may('banpubkey')) {
    section.append(field('npub or hex public key', key), state)
  }

  // The pubkey typed, or an Error in words (a broken npub) that the action shows.
  const pubkey = () => {
    if (!key.value.trim()) throw new Error('type the npub or hex key of the person first')
    return typedPubkey(key.value)
  }
  const act = (trigger, work, confirmation) => onAction(trigger, status, work, confirmation)

  const add = button('desk-member-add', 'Add as a member')
  const reason = h('input', { id: 'desk-member-reason', type: 'text', maxlength: 1000 })
  const ban = button('desk-member-ban', 'Ban', { class: 'danger' })
  if (desk.may('banpubkey')) {
    section.append(field('Reason for a ban (optional, kept with it)', reason))
  }
  const row = [desk.may('allowpubkey') ? add : null, desk.may('banpubkey') ? ban : null]
  if (row.some(Boolean)) section.append(h('div', { class: 'desk-row' }, ...row))
  act(add, async () => {
    const hex = pubkey()
    await desk.call('allowpubkey', [hex])
    if (desk.asked.has('banned')) await desk.refresh(['banned'])
    return `Added ${personName(hex)}: a member now (a ban, if any, lifted).`
  })
  act(
    ban,
    async () => {
      const hex = pubkey()
      await desk.call('banpubkey', [hex, reason.value.trim() || null])
      reason.value = ''
      await desk.refresh(['banned'])
      return `Banned ${personName(hex)}: removed if a member, and kept out.`
    },
    () => [`Ban ${personName(pubkey())}? They are removed if a member, and kept out until unbanned.`, 'Ban'],
  )
  section.append(status)

  const banned = h('ul', { id: 'desk-banned-list', class: 'desk-list' })
  const pager = new Pager(banned, bannedItem, { empty: 'No one is banned.', what: 'banned' })
  if (desk.may('listbannedpubkeys')) section.append(h('h4', { text: 'Banned' }), banned)

  function bannedItem(ban) {
    const item = h('li', { 'data-pubkey': ban.pubkey }, personNode(ban.pubkey))
    if (ban.reason) item.append(' ', h('span', { class: 'reason', text: ban.reason }))
    if (desk.may('unbanpubkey')) {
      const lift = personButton(null, 'Unban', 'Unban', ban.pubkey, { class: 'banned-unban' })
      act(lift, async () => {
        await desk.call('unbanpubkey', [ban.pubkey])
        await desk.refresh(['banned'])
        return unbanned(ban.pubkey)
      })
      item.append(' ', lift)
    }
    return item
  }

  function describe() {
    let hex
    try {
      hex = key.value.trim() ? typedPubkey(key.value) : null
    } catch (error) {
      state.textContent = `That key does not read: ${error.message}.`
      return
    }
    if (!hex || !/^[0-9a-f]{64}$/.test(hex)) {
      state.textContent = ''
      return
    }
    const member = memberOf(hex)
    const ban = desk.data.banned?.find((b) => b.pubkey === hex)
    if (member) {
      const held = member.roles.map((id) => community.roleBook.get(id).label)
      state.textContent = `${personName(hex)} is a member, base role ${member.baseRole}${
        held.length ? `; holds ${held.join(', ')}` : ''}: manage them from their row in the list.`
    } else if (ban) {
      state.textContent = `${personName(hex)} is banned${ban.reason ? `: ${ban.reason}` : ''}.`
    } else {
      state.textContent = `${personName(hex)} is not a member.`
    }
  }
  key.addEventListener('input', describe)

  let drawn = null
  function draw(failed) {
    const bans = desk.data.banned
    if (bans && bans !== drawn) pager.draw(bans)
    drawn = bans
    describe()
    if (failed.banned) say(status, 'error', `Could not list the banned. ${failure(failed.banned)}`)
  }

  return {
    section,
    draw,
    title: 'Members',
    lists: ['banned'],
    count: () => (community.list ? community.members.length.toLocaleString() : null),
  }
}
