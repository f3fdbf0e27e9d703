// The owner's and admins' desk (SPEC section 8): every action one NIP-86 call signed by the
// logged-in person's signer. It appears when supportedmethods answers them some method, and
// shows only the controls whose methods are among them: the relay decides who may call what.
// The panels live in desk/: invites, members, join requests, roles, profile and join policy.
import { community, memberOf, watch } from './community.js'
import { invitesPanel } from './desk/invites.js'
import { membersPanel } from './desk/members.js'
import { profilePanel } from './desk/profile.js'
import { requestsPanel } from './desk/requests.js'
import { rolesPanel } from './desk/roles.js'
import { treePanel } from './desk/tree.js'
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

class Desk {
  constructor(pubkey, methods) {
    this.pubkey = pubkey
    this.methods = new Set(methods)
    this.data = {}
    this.panels = []
    this.pending = new Set()
    this.loading = null
  }

  may(method) {
    return this.methods.has(method)
  }

  // One NIP-86 call as the person logged in: the result, or a ManagementError.
  call(method, params = []) {
    return call(this.pubkey, method, params)
  }

  // Asks the relay again for the named lists (all by default) and redraws every panel with
  // what came (and the words of what failed, by list name). A refresh asked while one runs
  // is made right after it, once, so lists never come back out of order.
  refresh(names = Object.keys(LISTS)) {
    for (const name of names) if (this.may(LISTS[name])) this.pending.add(name)
    if (!this.loading && this.pending.size) this.loading = this.load()
    return this.loading ?? Promise.resolve()
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
            } catch (error) {
              failed[name] = error
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

  draw(failed = {}) {
    for (const shown of this.panels) shown.draw(failed)
  }
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
  desk.panels = [invitesPanel, membersPanel, treePanel, requestsPanel, rolesPanel, profilePanel]
    .map((make) => make(desk))
    .filter(Boolean)
  const section = document.getElementById('desk')
  section.replaceChildren(
    h('h2', { id: 'desk-title', text: 'Manage the community' }),
    ...desk.panels.map((shown) => shown.section),
  )
  section.hidden = false
  watch((what) => {
    desk.draw()
    // A new list: an invite may have been used, a request approved elsewhere, someone
    // brought in or gone (the invitations' tree). Only those three are asked again: each read
    // is a NIP-98 signature, and a signer may ask the person for every one; the other lists
    // change by the desk's own actions, which refresh them. Not for a person the new list no
    // longer names: the relay refuses a non-member every method.
    if (what === 'list' && memberOf(desk.pubkey)) desk.refresh(['invites', 'requests', 'tree'])
  })
  desk.draw()
  await desk.refresh()
}

export function startDesk() {
  watch((what) => {
    if (what === 'me') open()
  })
  open()
}
