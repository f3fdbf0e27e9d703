// Invitations: the tree of who brought whom in (listinvitetree), each member with their base
// role and how many more they may bring in; the invite quotas of admins and members
// (listinvitequotas, setinvitequota); and removing a member with everyone they brought in
// (removebranch), after a confirmation that names them and how many go. All three are our
// NIP-86 extensions (docs/relay.md). The tree opens a level at a time: the root's children
// first, a page of them, each member's own opened on demand; 10,000 members never draw at once.
import { h } from '../dom.js'
import { personName } from '../people.js'
import {
  button,
  failure,
  field,
  onAction,
  Pager,
  panel,
  personButton,
  personNode,
  say,
} from './ui.js'

const QUOTA_ROLES = [
  ['admin', 'Each admin may bring in'],
  ['member', 'Each member may bring in'],
]
const ROLE_ORDER = { owner: 0, admin: 1, member: 2 }
const TREE_PAGE = 20 // children shown at once under a member, then "more"

const QUOTA_HINT =
  'How many members each may bring in: those they brought in who are still members count, ' +
  'and so do the uses left on their live invites. Empty: no limit.'

const members = (n) => (n === 1 ? '1 member' : `${n} members`)

function leftWords(left) {
  if (left === null || left === undefined) return 'invites: no limit'
  if (left === 0) return 'no invites left'
  return left === 1 ? '1 invite left' : `${left} invites left`
}

// The members as a tree, [{member, children, size}] from the roots: each member under the
// one who brought them in (added_by); the owner is the root, and whoever's inviter is not a
// member (an operator's label, someone who left) hangs from the root too. A loop of added_by
// (only a direct write to the database can make one) is cut where it is first met. `size` is
// the member and everyone below, as removebranch takes them.
export function inviteTree(rows) {
  const nodes = new Map(rows.map((m) => [m.pubkey, { member: m, children: [], size: 1 }]))
  const owner = rows.find((m) => m.role === 'owner')
  const root = owner ? nodes.get(owner.pubkey) : null
  const roots = root ? [root] : []
  const hang = (node) => (root && node !== root ? root.children : roots).push(node)
  for (const node of nodes.values()) {
    if (node === root) continue
    const parent = nodes.get(node.member.added_by)
    if (parent && parent !== node) parent.children.push(node)
    else hang(node)
  }
  // Every node reached from the roots, parents first (a stack: a chain of 10,000 is no
  // recursion); those in a loop are not, and are cut from it and hung from the root.
  const order = []
  const reached = new Set()
  const reach = (start) => {
    const stack = [start]
    while (stack.length) {
      const node = stack.pop()
      reached.add(node)
      order.push(node)
      stack.push(...node.children)
    }
  }
  roots.forEach(reach)
  for (const node of nodes.values()) {
    if (reached.has(node)) continue
    const parent = nodes.get(node.member.added_by)
    parent.children.splice(parent.children.indexOf(node), 1)
    hang(node)
    reach(node)
  }
  for (const node of order.reverse()) {
    node.children.sort(
      (a, b) =>
        ROLE_ORDER[a.member.role] - ROLE_ORDER[b.member.role] ||
        (a.member.pubkey < b.member.pubkey ? -1 : 1),
    )
    node.size = 1 + node.children.reduce((sum, child) => sum + child.size, 0)
  }
  return roots
}

export function treePanel(desk) {
  if (!['listinvitetree', 'listinvitequotas', 'setinvitequota'].some((m) => desk.may(m))) {
    return null
  }
  const { section, status } = panel(
    'desk-tree',
    'Invitations',
    'Who brought whom in, and how many more each may invite. The owner has no limit.',
  )

  const quotaInputs = {}
  if (desk.may('setinvitequota') || desk.may('listinvitequotas')) {
    section.append(
      h('h4', { text: 'Invite quotas' }),
      h('p', { id: 'desk-tree-quota-hint', class: 'hint', text: QUOTA_HINT }),
    )
    for (const [role, label] of QUOTA_ROLES) {
      const id = `desk-tree-quota-${role}`
      const input = h('input', {
        id,
        type: 'number',
        min: 0,
        step: 1,
        placeholder: 'no limit',
        'aria-describedby': 'desk-tree-quota-hint',
      })
      quotaInputs[role] = input
      const save = button(`${id}-save`, `Save the ${role}s' quota`)
      section.append(
        h(
          'div',
          { class: 'desk-row quota' },
          field(label, input),
          desk.may('setinvitequota') ? save : null,
        ),
      )
      onAction(save, status, async () => {
        const typed = input.value.trim()
        const quota = typed === '' ? null : Number(typed)
        if (quota !== null && !(Number.isInteger(quota) && quota >= 0)) {
          throw new Error('a quota is a whole number from 0, or empty for no limit')
        }
        const outcome = await desk.call('setinvitequota', [role, quota])
        await desk.refresh(['quotas', 'tree'])
        const words = quota === null ? 'any number of members' : members(quota)
        return outcome === 'unchanged'
          ? `Each ${role} may bring in ${words} already.`
          : `Saved: each ${role} may now bring in ${words}.`
      })
    }
  }
  section.append(status)

  const list = h('ul', { id: 'desk-tree-list', class: 'desk-tree' })
  if (desk.may('listinvitetree')) section.append(h('h4', { text: 'Who brought whom in' }), list)

  // What the person opened, kept from one tree to the next: whose children are shown, and
  // how many of them (by pubkey). The root's are shown from the start.
  const opened = new Set()
  const counts = new Map()
  let rootKey = null

  function removeButton(node) {
    const { pubkey } = node.member
    const below = node.size - 1
    const text = below ? `Remove with the ${members(below)} they brought in` : 'Remove'
    const remove = personButton(null, text, `${text}:`, pubkey, { class: 'tree-remove danger' })
    onAction(
      remove,
      status,
      async () => {
        const name = personName(pubkey)
        const { removed } = await desk.call('removebranch', [pubkey])
        await desk.refresh(['tree'])
        return removed
          ? `Removed ${members(removed)}: ${name} and everyone they brought in.`
          : `${name} was not a member any more: no one was removed.`
      },
      () => [
        `Remove ${personName(pubkey)} and everyone they brought in? ${members(node.size)} ` +
          'leave the community.',
        `Remove ${members(node.size)}`,
      ],
    )
    return remove
  }

  // The children of `node` under `li`, a page of them, and the toggle that shows them.
  function children(node, li, toggle) {
    const { pubkey } = node.member
    const shown = h('ul', { class: 'desk-tree' })
    const pager = new Pager(shown, item, { size: TREE_PAGE, what: 'they brought in' })
    pager.count = counts.get(pubkey) ?? TREE_PAGE
    pager.more.addEventListener('click', () => counts.set(pubkey, pager.count))
    pager.draw(node.children)
    li.append(shown)
    toggle?.setAttribute('aria-expanded', 'true')
  }

  function item(node) {
    const { pubkey, role, invites_left: left } = node.member
    const line = h(
      'div',
      { class: 'tree-member' },
      personNode(pubkey),
      ' ',
      h('span', { class: 'base-role', text: role }),
      ' ',
      h('span', { class: 'tree-left', text: leftWords(left) }),
    )
    const li = h('li', { 'data-pubkey': pubkey, 'data-role': role }, line)
    let toggle = null
    const count = node.children.length
    // Its name starts with the words it shows, then whose level it is.
    const label = (shown) => {
      toggle.textContent = `${shown ? 'Hide' : 'Show'} the ${count} they brought in`
      toggle.dataset.words = `${toggle.textContent}:`
      toggle.setAttribute('aria-label', `${toggle.dataset.words} ${personName(pubkey)}`)
    }
    if (node.size > 1) {
      line.append(' ', h('span', { class: 'tree-size', text: `(${members(node.size - 1)} below)` }))
      if (pubkey !== rootKey) {
        toggle = personButton(null, '', '', pubkey, { class: 'tree-open', 'aria-expanded': 'false' })
        label(false)
        toggle.addEventListener('click', () => {
          if (opened.has(pubkey)) {
            opened.delete(pubkey)
            li.querySelector(':scope > ul')?.remove()
            toggle.setAttribute('aria-expanded', 'false')
            label(false)
          } else {
            opened.add(pubkey)
            children(node, li, toggle)
            label(true)
          }
        })
        line.append(' ', toggle)
      }
    }
    if (role !== 'owner' && desk.may('removebranch')) line.append(' ', removeButton(node))
    if (node.size > 1 && (pubkey === rootKey || opened.has(pubkey))) {
      children(node, li, toggle)
      if (toggle) label(true)
    }
    return li
  }

  // The tree drawn again from what was opened; the focus, on a button of a member still
  // there, goes back to the same button.
  function drawTree(rows) {
    const focused = document.activeElement
    const from = focused?.closest?.('#desk-tree-list li[data-pubkey]')
    const again = from && focused.className
    const roots = inviteTree(rows)
    rootKey = roots.length === 1 ? roots[0].member.pubkey : null
    list.replaceChildren(...roots.map(item))
    if (!rows.length) list.append(h('li', { class: 'empty', text: 'No members.' }))
    if (again) {
      const key = CSS.escape(from.dataset.pubkey)
      list.querySelector(`li[data-pubkey="${key}"] > .tree-member > .${again.split(' ')[0]}`)?.focus()
    }
  }

  // Redrawn only when a list came again, so a focused button stays where it is otherwise.
  let drawn = {}
  function draw(failed) {
    const { tree, quotas } = desk.data
    if (tree && tree !== drawn.tree) drawTree(tree)
    if (quotas && quotas !== drawn.quotas) {
      for (const [role, input] of Object.entries(quotaInputs)) {
        // Not while someone is typing a new one.
        if (document.activeElement !== input) input.value = quotas[role] ?? ''
      }
    }
    drawn = { tree, quotas }
    const error = failed.tree ?? failed.quotas
    if (error) say(status, 'error', `Could not list the invitations. ${failure(error)}`)
  }

  return { section, draw, title: 'Invitations', lists: ['tree', 'quotas'] }
}
