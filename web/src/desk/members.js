// Members: for one pubkey typed (npub or hex), add, remove, ban, unban, change the base role
// (admin or member: setmemberrole, our extension) and assign or unassign a defined role; and
// the banned list. What the pubkey is now comes from the verified list on screen and the
// banned list, so it follows each action without asking.
import { community, memberOf } from '../community.js'
import { h } from '../dom.js'
import {
  BASE_ROLES,
  button,
  failure,
  field,
  keyInput,
  npubNode,
  onAction,
  panel,
  say,
  shortNpub,
  typedPubkey,
} from './ui.js'

const METHODS = [
  'allowpubkey',
  'unallowpubkey',
  'banpubkey',
  'unbanpubkey',
  'listbannedpubkeys',
  'setmemberrole',
  'assignrole',
  'unassignrole',
]

const unbanned = (pubkey) =>
  `Unbanned ${shortNpub(pubkey)}: they may join again (they are not a member by this).`

export function membersPanel(desk) {
  if (!METHODS.some((m) => desk.may(m))) return null
  const { section, status } = panel('desk-members', 'Members')
  const key = keyInput('desk-member-key')
  const state = h('p', { id: 'desk-member-state', 'aria-live': 'polite' })
  section.append(field('Member: npub or hex public key', key), state)

  // The pubkey typed, or an Error in words (a broken npub) that the action shows.
  const pubkey = () => {
    if (!key.value.trim()) throw new Error('type the npub or hex key of the person first')
    return typedPubkey(key.value)
  }
  const only = (method, node) => (desk.may(method) ? node : null)
  const row = (...nodes) => {
    const present = nodes.filter(Boolean)
    if (present.length) section.append(h('div', { class: 'desk-row' }, ...present))
  }
  const act = (trigger, work, confirmation) => onAction(trigger, status, work, confirmation)

  const add = button('desk-member-add', 'Add as a member')
  const remove = button('desk-member-remove', 'Remove', { class: 'danger' })
  row(only('allowpubkey', add), only('unallowpubkey', remove))
  act(add, async () => {
    const hex = pubkey()
    await desk.call('allowpubkey', [hex])
    await desk.refresh(['banned'])
    return `Added ${shortNpub(hex)}: a member now (a ban, if any, lifted).`
  })
  act(
    remove,
    async () => {
      const hex = pubkey()
      await desk.call('unallowpubkey', [hex])
      return `Removed ${shortNpub(hex)}: not a member now.`
    },
    () => [`Remove ${shortNpub(pubkey())} from the community?`, 'Remove'],
  )

  const reason = h('input', { id: 'desk-member-reason', type: 'text', maxlength: 1000 })
  const ban = button('desk-member-ban', 'Ban', { class: 'danger' })
  const unban = button('desk-member-unban', 'Unban')
  if (desk.may('banpubkey')) {
    section.append(field('Reason for a ban (optional, kept with it)', reason))
  }
  row(only('banpubkey', ban), only('unbanpubkey', unban))
  act(
    ban,
    async () => {
      const hex = pubkey()
      await desk.call('banpubkey', [hex, reason.value.trim() || null])
      reason.value = ''
      await desk.refresh(['banned'])
      return `Banned ${shortNpub(hex)}: removed if a member, and kept out.`
    },
    () => [`Ban ${shortNpub(pubkey())}? They are removed, and kept out until unbanned.`, 'Ban'],
  )
  act(unban, async () => {
    const hex = pubkey()
    await desk.call('unbanpubkey', [hex])
    await desk.refresh(['banned'])
    return unbanned(hex)
  })

  const baseRole = h(
    'select',
    { id: 'desk-member-base-role' },
    h('option', { value: 'member', text: 'member' }),
    h('option', { value: 'admin', text: 'admin' }),
  )
  const setBase = button('desk-member-set-base', 'Change base role')
  if (desk.may('setmemberrole')) row(field('Base role', baseRole), setBase)
  act(setBase, async () => {
    const hex = pubkey()
    const outcome = await desk.call('setmemberrole', [hex, baseRole.value])
    return outcome === 'unchanged'
      ? `${shortNpub(hex)} is ${baseRole.value === 'admin' ? 'an admin' : 'a member'} already.`
      : `${shortNpub(hex)} is ${baseRole.value === 'admin' ? 'an admin' : 'a plain member'} now.`
  })

  const role = h('select', { id: 'desk-member-role' })
  const assign = button('desk-member-assign', 'Assign role')
  const unassign = button('desk-member-unassign', 'Unassign role')
  if (desk.may('assignrole') || desk.may('unassignrole')) {
    row(field('Defined role', role), only('assignrole', assign), only('unassignrole', unassign))
  }
  const roleName = () => {
    if (!role.value) throw new Error('define a role first (Roles, below)')
    return desk.data.roles?.find((r) => r.id === role.value)?.label ?? role.value
  }
  act(assign, async () => {
    const hex = pubkey()
    const label = roleName()
    await desk.call('assignrole', [hex, role.value])
    return `${shortNpub(hex)} holds ${label} now.`
  })
  act(unassign, async () => {
    const hex = pubkey()
    const label = roleName()
    await desk.call('unassignrole', [hex, role.value])
    return `${shortNpub(hex)} does not hold ${label} now.`
  })
  section.append(status)

  const banned = h('ul', { id: 'desk-banned-list', class: 'desk-list' })
  if (desk.may('listbannedpubkeys')) section.append(h('h4', { text: 'Banned' }), banned)

  function bannedItem(ban) {
    const item = h('li', { 'data-pubkey': ban.pubkey }, npubNode(ban.pubkey))
    if (ban.reason) item.append(' ', h('span', { class: 'reason', text: ban.reason }))
    if (desk.may('unbanpubkey')) {
      const lift = button(null, 'Unban', { class: 'banned-unban' })
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
      state.textContent = `${shortNpub(hex)} is a member, base role ${member.baseRole}${
        held.length ? `; holds ${held.join(', ')}` : ''}.`
    } else if (ban) {
      state.textContent = `${shortNpub(hex)} is banned${ban.reason ? `: ${ban.reason}` : ''}.`
    } else {
      state.textContent = `${shortNpub(hex)} is not a member.`
    }
  }
  key.addEventListener('input', describe)

  let drawn = {}
  function draw(failed) {
    const { banned: bans, roles } = desk.data
    if (bans && bans !== drawn.bans) {
      banned.replaceChildren(...bans.map(bannedItem))
      if (!bans.length) banned.append(h('li', { class: 'empty', text: 'No one is banned.' }))
    }
    if (roles && roles !== drawn.roles) {
      const chosen = role.value
      const defined = roles.filter((r) => !BASE_ROLES.includes(r.id))
      role.replaceChildren(
        ...defined.map((r) =>
          h('option', { value: r.id, text: `${r.label} (${r.id})`, selected: r.id === chosen }),
        ),
      )
    }
    drawn = { bans, roles }
    describe()
    if (failed.banned) say(status, 'error', `Could not list the banned. ${failure(failed.banned)}`)
  }

  return { section, draw }
}
