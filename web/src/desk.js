// The owner's and admins' desk (SPEC section 8): every action one NIP-86 call signed by the
// logged-in person's signer. It appears when supportedmethods answers them some method, and
// shows only the sections and controls whose methods are among them: the relay decides who
// may call what. The sections (desk/: invites, members, join requests, the invitations' tree,
// roles, profile and join policy) are tabs a person moves between, one shown at a time, join
// requests first when any are pending; each member row of the page's list offers that
// member's actions (desk/rows.js).
//
// Each read is a NIP-98 signature, and a signer may ask the person for every one: a section's
// lists are asked for when it is first opened, never all at start; only the join requests
// are read at once (their count decides which section comes first).
import { community, memberOf, watch } from './community.js'
import { invitesPanel } from './desk/invites.js'
import { membersPanel } from './desk/members.js'
import { profilePanel } from './desk/profile.js'
import { requestsPanel } from './desk/requests.js'
import { rolesPanel } from './desk/roles.js'
import { startRows } from './desk/rows.js'
import { treePanel } from './desk/tree.js'
import { redrawPeople } from './desk/ui.js'
import { h } from './dom.js'
import { call } from './nip86.js'

// The lists the desk shows, each the answer of one read method, kept in desk.data by name.
const LISTS = {
  claims: 'listclaims',
  invites: 'listinvites',
  banned: 'listbannedpubkeys',
  requests: 'listeventsneedingmoderation',
  roles: 'listroles',
  tree: 'listinvitetree',
  quotas: 'listinvitequotas',
}

// The sections in their order; join requests move to the front while any are pending.
const SECTIONS = [invitesPanel, membersPanel, requestsPanel, treePanel, rolesPanel, profilePanel]

class Desk {
  constructor(pubkey, methods) {
    this.pubkey = pubkey
    this.methods = new Set(methods)
    this.data = {}
    this.failed = {} // the last error of each list that failed, by name
    this.asked = new Set() // the lists asked for once: kept fresh from then on
    this.panels = []
    this.pending = new Set()
    this.loading = null
    this.onDraw = () => {}
  }

  may(method) {
    return this.methods.has(method)
  }

  // One NIP-86 call as the person logged in: the result, or a ManagementError.
  call(method, params = []) {
    return call(this.pubkey, method, params)
  }

  // Asks the relay again for the named lists and redraws every panel with what came (and the
  // words of what failed, by list name). A refresh asked while one runs is made right after
  // it, once, so lists never come back out of order.
  refresh(names) {
    for (const name of names) {
      if (!this.may(LISTS[name])) continue
      this.asked.add(name)
      this.pending.add(name)
    }
    if (!this.loading && this.pending.size) this.loading = this.load()
    return this.loading ?? Promise.resolve()
  }

  // The named lists not yet asked for (a section opened for the first time).
  need(names) {
    return this.refresh(names.filter((name) => !this.asked.has(name)))
  }

  async load() {
    try {
      while (this.pending.size) {
        const wanted = [...this.pending]
        this.pending.clear()
        const failed = {}
        await Promise.all(
          wanted.map(async (name) => {
            try {
              this.data[name] = await this.call(LISTS[name])
              delete this.failed[name]
            } catch (error) {
              failed[name] = error
              this.failed[name] = error
            }
          }),
        )
        this.draw(failed)
      }
    } finally {
      // In the same turn as the last check of `pending`: no refresh can fall in between.
      this.loading = null
    }
  }

  // Whether every list a panel shows has come (or failed, in words): the panel is drawn.
  drawn(shown) {
    return (shown.lists ?? []).every(
      (name) => !this.may(LISTS[name]) || name in this.data || name in this.failed,
    )
  }

  draw(failed = {}) {
    for (const shown of this.panels) {
      shown.draw(failed)
      if (this.drawn(shown)) shown.section.dataset.drawn = ''
    }
    this.onDraw()
  }
}

// The tabs: a tablist of buttons (role=tab, aria-selected, aria-controls), one tab stop (the
// chosen one); the arrow keys, Home and End move between them and Enter or Space opens one
// (opening asks for its lists: never on the way past).
function tabs(desk) {
  const list = h('div', { id: 'desk-tabs', role: 'tablist', 'aria-labelledby': 'desk-title' })
  const byPanel = new Map()
  for (const shown of desk.panels) {
    const name = shown.section.id.replace(/^desk-/, '')
    const tab = h('button', {
      type: 'button',
      id: `desk-tab-${name}`,
      role: 'tab',
      'aria-controls': shown.section.id,
      'aria-selected': 'false',
      tabindex: '-1',
    })
    tab.addEventListener('click', () => choose(shown))
    byPanel.set(shown, tab)
  }

  function label() {
    for (const [shown, tab] of byPanel) {
      const count = shown.count?.()
      const text = count === null || count === undefined ? shown.title : `${shown.title} (${count})`
      if (tab.textContent !== text) tab.textContent = text
    }
  }

  // Join requests first while any are pending, else in their place; a tab with the focus
  // stays where it is (moving it would drop the focus).
  function order() {
    const requests = desk.panels.find((shown) => shown.section.id === 'desk-requests')
    const ordered = requests && requests.count?.() > 0
      ? [requests, ...desk.panels.filter((shown) => shown !== requests)]
      : desk.panels
    const wanted = ordered.map((shown) => byPanel.get(shown))
    const now = [...list.children]
    if (now.length === wanted.length && now.every((tab, i) => tab === wanted[i])) return
    if (wanted.includes(document.activeElement)) return
    list.replaceChildren(...wanted)
  }

  function choose(shown) {
    for (const [other, tab] of byPanel) {
      const chosen = other === shown
      tab.setAttribute('aria-selected', String(chosen))
      tab.tabIndex = chosen ? 0 : -1
      other.section.hidden = !chosen
    }
    desk.need(shown.lists ?? [])
    if (desk.drawn(shown)) shown.section.dataset.drawn = ''
  }

  list.addEventListener('keydown', (event) => {
    const all = [...list.children]
    const at = all.indexOf(document.activeElement)
    if (at < 0) return
    const to = {
      ArrowRight: (at + 1) % all.length,
      ArrowDown: (at + 1) % all.length,
      ArrowLeft: (at - 1 + all.length) % all.length,
      ArrowUp: (at - 1 + all.length) % all.length,
      Home: 0,
      End: all.length - 1,
    }[event.key]
    if (to === undefined) return
    event.preventDefault()
    all[to].focus()
  })

  return { list, label, order, choose, first: () => [...list.children][0] }
}

let asked = null // the pubkey supportedmethods was asked for

async function open() {
  const me = community.me
  if (!me || asked === me) return
  asked = me
  let methods
  try {
    methods = await call(me, 'supportedmethods')
  } catch {
    return // nothing to manage that this page can tell: no desk, as for most people
  }
  if (!Array.isArray(methods) || methods.length === 0 || community.me !== me) return
  const desk = new Desk(me, methods)
  desk.panels = SECTIONS.map((make) => make(desk)).filter(Boolean)
  const rows = startRows(desk)
  // Their count decides the order: read before the desk is drawn.
  await desk.refresh(['requests'])
  const section = document.getElementById('desk')
  if (desk.panels.length) {
    const nav = tabs(desk)
    desk.onDraw = () => {
      nav.label()
      nav.order()
      rows?.follow()
    }
    section.replaceChildren(
      h('h2', { id: 'desk-title', text: 'Manage the community' }),
      nav.list,
      ...desk.panels.map((shown) => shown.section),
    )
    desk.draw()
    nav.choose(desk.panels.find((shown) => nav.first().getAttribute('aria-controls') === shown.section.id))
    section.hidden = false
  } else {
    desk.onDraw = () => rows?.follow()
  }
  watch((what) => {
    if (what === 'profiles') {
      redrawPeople(section)
      rows?.redrawPeople()
    }
    desk.draw()
    rows?.follow(what)
    // A new list: an invite may have been used, a request approved elsewhere, someone
    // brought in or gone (the invitations' tree). Those already asked for are asked again,
    // and the requests for their count. Not for a person the new list no longer names: the
    // relay refuses a non-member every method.
    if (what === 'list' && memberOf(desk.pubkey)) {
      desk.refresh(['invites', 'claims', 'tree'].filter((name) => desk.asked.has(name)).concat('requests'))
    }
  })
}

export function startDesk() {
  watch((what) => {
    if (what === 'me') open()
  })
  open()
}
