// Each member row of the page's list (#member-list, drawn by members.js a page at a time)
// offers that member's actions to a person with a desk: one "Manage" button per row, which
// opens the member's own dialog: remove (unallowpubkey), ban (banpubkey, with a reason), base
// role (setmemberrole: admin or member) and the defined roles (assignrole, unassignrole), each
// after a confirmation that names the person. One button a row keeps 100 rows to 100 controls.
import { community, memberOf } from '../community.js'
import { h } from '../dom.js'
import { personName } from '../people.js'
import {
  BASE_ROLES,
  button,
  field,
  onAction,
  personButton,
  personNode,
  redrawPeople,
  say,
} from './ui.js'

const METHODS = ['unallowpubkey', 'banpubkey', 'setmemberrole', 'assignrole', 'unassignrole']

const article = (role) => (role === 'admin' ? 'an admin' : 'a plain member')

export function startRows(desk) {
  if (!METHODS.some((m) => desk.may(m))) return null
  const list = document.getElementById('member-list')
  // What happened to someone no longer listed (removed, banned) is said above the list, and
  // the focus goes there: their row and their dialog are gone.
  const outcome = h('p', { id: 'desk-rows-status', class: 'desk-status', role: 'status', tabindex: '-1' })
  list.before(outcome)

  function decorate(row) {
    if (!row.matches?.('li.member') || row.querySelector('.member-manage')) return
    const manage = personButton(null, 'Manage', 'Manage', row.dataset.pubkey, {
      class: 'member-manage',
      'aria-haspopup': 'dialog',
    })
    row.append(manage)
  }
  const decorateAll = () => list.querySelectorAll('li.member').forEach(decorate)
  // Rows are drawn again at each list, search and page: each gets its button as it comes, in
  // the same turn (before the page is painted).
  new MutationObserver((changes) => {
    for (const change of changes) change.addedNodes.forEach(decorate)
  }).observe(list, { childList: true })
  decorateAll()
  list.addEventListener('click', (event) => {
    const manage = event.target.closest?.('button.member-manage')
    if (manage) dialog.open(manage.closest('li.member').dataset.pubkey, manage)
  })

  const dialog = memberDialog(desk, outcome)
  return {
    follow: (what) => dialog.follow(what),
    // The rows themselves are drawn again by the list (app.js), each given its button anew.
    redrawPeople: () => redrawPeople(dialog.node),
  }
}

// The member's dialog: who they are now (base role, roles held, from the verified list on
// screen), then what may be done to them.
function memberDialog(desk, outcome) {
  const title = h('h3', { id: 'desk-manage-title' })
  const state = h('p', { id: 'desk-manage-state' })
  const status = h('p', { id: 'desk-manage-status', class: 'desk-status', role: 'status' })
  const node = h('dialog', { id: 'desk-manage', 'aria-labelledby': 'desk-manage-title' }, title, state)
  let pubkey = null // the member shown
  let opener = null

  const baseRole = h(
    'select',
    { id: 'desk-manage-base-role' },
    h('option', { value: 'member', text: 'member' }),
    h('option', { value: 'admin', text: 'admin' }),
  )
  const setBase = button('desk-manage-set-base', 'Change base role')
  const baseRow = h('div', { class: 'desk-row' }, field('Base role', baseRole), setBase)
  if (desk.may('setmemberrole')) node.append(baseRow)

  const role = h('select', { id: 'desk-manage-role' })
  const toggle = button('desk-manage-role-toggle', 'Give this role')
  const roleRow = h('div', { class: 'desk-row' }, field('Defined role', role), toggle)
  if (desk.may('assignrole') || desk.may('unassignrole')) node.append(roleRow)

  const reason = h('input', { id: 'desk-manage-reason', type: 'text', maxlength: 1000 })
  const reasonRow = field('Reason for a ban (optional, kept with it)', reason)
  const remove = button('desk-manage-remove', 'Remove', { class: 'danger' })
  const ban = button('desk-manage-ban', 'Ban', { class: 'danger' })
  const leaveRow = h(
    'div',
    { class: 'desk-row' },
    desk.may('unallowpubkey') ? remove : null,
    desk.may('banpubkey') ? ban : null,
  )
  if (desk.may('banpubkey')) node.append(reasonRow)
  if (desk.may('unallowpubkey') || desk.may('banpubkey')) node.append(leaveRow)
  const close = button('desk-manage-close', 'Close')
  node.append(status, h('div', { class: 'desk-row' }, close))
  close.addEventListener('click', () => node.close())
  node.addEventListener('close', () => {
    // Back to the row's button (drawn again since, if a list came), when the row is there.
    if (!opener) return
    const key = CSS.escape(pubkey)
    const again = opener.isConnected
      ? opener
      : document.querySelector(`#member-list li.member[data-pubkey="${key}"] .member-manage`)
    again?.focus()
  })

  const act = (trigger, work, confirmation) => onAction(trigger, status, work, confirmation)
  const who = () => personName(pubkey)
  // Said above the list, the dialog closed: the row is gone with the person.
  const gone = (words) => {
    opener = null
    node.close()
    say(outcome, 'ok', words)
    outcome.focus()
    return words
  }

  act(
    remove,
    async () => {
      const name = who()
      await desk.call('unallowpubkey', [pubkey])
      return gone(`Removed ${name}: not a member now.`)
    },
    () => [`Remove ${who()} from the community?`, 'Remove'],
  )
  act(
    ban,
    async () => {
      const name = who()
      await desk.call('banpubkey', [pubkey, reason.value.trim() || null])
      reason.value = ''
      if (desk.asked.has('banned')) desk.refresh(['banned'])
      return gone(`Banned ${name}: removed, and kept out until unbanned.`)
    },
    () => [`Ban ${who()}? They are removed, and kept out until unbanned.`, 'Ban'],
  )
  act(
    setBase,
    async () => {
      const wanted = baseRole.value
      const done = await desk.call('setmemberrole', [pubkey, wanted])
      return done === 'unchanged'
        ? `${who()} is ${article(wanted)} already.`
        : `${who()} is ${article(wanted)} now.`
    },
    () => {
      const wanted = baseRole.value
      return wanted === 'admin'
        ? [`Make ${who()} an admin? Admins manage the community as you do.`, 'Make admin']
        : [`Make ${who()} a plain member? They stop managing the community.`, 'Make member']
    },
  )

  const holds = (id) => memberOf(pubkey)?.roles.includes(id) ?? false
  const roleLabel = (id) => desk.data.roles?.find((r) => r.id === id)?.label ?? community.roleBook.get(id).label
  act(
    toggle,
    async () => {
      const id = role.value
      if (!id) throw new Error('define a role first (the Roles section)')
      const label = roleLabel(id)
      if (holds(id)) {
        await desk.call('unassignrole', [pubkey, id])
        return `${who()} does not hold ${label} now.`
      }
      await desk.call('assignrole', [pubkey, id])
      return `${who()} holds ${label} now.`
    },
    () => {
      const id = role.value
      if (!id) throw new Error('define a role first (the Roles section)')
      return holds(id)
        ? [`Take the role ${roleLabel(id)} from ${who()}?`, 'Take role']
        : [`Give ${who()} the role ${roleLabel(id)}?`, 'Give role']
    },
  )

  // The role select: the defined roles (listroles, asked for when a dialog first opens).
  let drawnRoles = null
  function drawRoles() {
    const roles = desk.data.roles
    if (roles && roles !== drawnRoles) {
      const chosen = role.value
      role.replaceChildren(
        ...roles
          .filter((r) => !BASE_ROLES.includes(r.id))
          .map((r) => h('option', { value: r.id, text: r.label ?? r.id, selected: r.id === chosen })),
      )
      drawnRoles = roles
    }
    const id = role.value
    toggle.disabled = !id || (holds(id) ? !desk.may('unassignrole') : !desk.may('assignrole'))
    toggle.textContent = id && holds(id) ? 'Take this role away' : 'Give this role'
  }
  role.addEventListener('change', drawRoles)

  // Who they are now; the owner's place is not the desk's to change.
  function describe() {
    if (!pubkey) return
    const member = memberOf(pubkey)
    const isOwner = member?.baseRole === 'owner'
    baseRow.hidden = !member || isOwner
    leaveRow.hidden = !member || isOwner
    reasonRow.hidden = !member || isOwner
    roleRow.hidden = !member
    if (!member) {
      state.textContent = `${personName(pubkey)} is not a member now.`
      return
    }
    const held = member.roles.map((id) => community.roleBook.get(id).label)
    state.textContent = `Base role ${member.baseRole}${held.length ? `; holds ${held.join(', ')}` : '; holds no defined role'}.`
    if (!isOwner && document.activeElement !== baseRole) {
      baseRole.value = member.baseRole === 'admin' ? 'member' : 'admin' // the change to make
    }
    drawRoles()
  }

  return {
    node,
    open(who, from) {
      if (!node.isConnected) document.body.append(node)
      pubkey = who
      opener = from
      title.replaceChildren('Manage ', personNode(pubkey))
      reason.value = ''
      say(status, '', '')
      describe()
      node.showModal()
      desk.need(['roles'])
    },
    follow() {
      if (node.open) describe()
    },
  }
}
