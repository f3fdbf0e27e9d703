// The community's page: the live member list, checked in the browser, with search and paging,
// for anyone; logging in with a NIP-07 signer, for the parts that act (the person's own view,
// the join by invite link, the desk). The server has already drawn the name, the description
// and the count, so the page says who the community is even without JavaScript.
import { npubEncode } from 'nostr-tools/nip19'
import { startAccount } from './account.js'
import { MemberBrowser } from './browse.js'
import { changed, community, watch } from './community.js'
import { startDesk } from './desk.js'
import { copyButton, h } from './dom.js'
import { startJoin } from './join.js'
import { countText, memberItem, membersOfList } from './members.js'
import { personNodes, shortened } from './people.js'
import { keepMembersOnly } from './profiles.js'
import { RelayConnection, relayAddress, relayInformation, sameOriginRelayUrl } from './relay.js'
import { roleFromEvent } from './roles.js'
import { whyInvalid } from './verify.js'

const KIND_MEMBER_LIST = 13534
const KIND_ROLE = 33534

const byId = (id) => document.getElementById(id)
const ui = {
  status: byId('list-status'),
  proof: byId('list-proof'),
  proofText: byId('list-proof-text'),
  count: byId('member-count'),
  search: byId('member-search'),
  list: byId('member-list'),
  prev: byId('members-prev'),
  next: byId('members-next'),
  page: byId('members-page'),
  runners: byId('community-runners'),
}
// The people named in the header as running the community: the owner and the first admins.
const RUNNERS_SHOWN = 4

const browser = new MemberBrowser()
// The newest verified list's created_at, kept when a later list fails: a list replaces only a
// newer one, so an old list (genuinely signed, but replaced since) is never shown again.
let newestSigned = -1

function setStatus(state, text) {
  ui.status.dataset.state = state
  ui.status.textContent = text
}

function draw() {
  const view = browser.view(community.roleBook)
  ui.list.replaceChildren(...view.members.map((m) => memberItem(m, community.roleBook)))
  ui.page.textContent = `page ${view.page} of ${view.pages}`
  ui.prev.disabled = view.page <= 1
  ui.next.disabled = view.page >= view.pages
}

// "Run by" the owner and the admins, named, in the header: who runs the community is the
// first thing a visitor reads, before the list and its proof.
function drawRunners() {
  if (!ui.runners) return
  const runners = community.members.filter((m) => m.baseRole === 'owner' || m.baseRole === 'admin')
  if (runners.length === 0) {
    ui.runners.hidden = true
    return
  }
  const named = runners.slice(0, RUNNERS_SHOWN)
  const parts = ['Run by ']
  named.forEach((m, i) => {
    if (i > 0) parts.push(i === named.length - 1 && runners.length === named.length ? ' and ' : ', ')
    parts.push(h('span', { class: 'person' }, ...personNodes(m.pubkey, m.npub)))
  })
  const more = runners.length - named.length
  if (more > 0) parts.push(` and ${more.toLocaleString()} more admin${more === 1 ? '' : 's'}`)
  ui.runners.replaceChildren(...parts)
  ui.runners.hidden = false
}

function failList(reason) {
  community.list = null
  community.members = []
  browser.setMembers([])
  // The count the server drew came from the same relay: it is no more trusted than the list.
  ui.count.textContent = 'Member count unknown'
  setStatus('failed', `This member list failed verification: ${reason}`)
  ui.proof.hidden = true
  drawRunners()
  draw()
  changed('list')
}

function onList(event) {
  if (event.kind !== KIND_MEMBER_LIST) return
  const why = whyInvalid(event, community.relayKey)
  if (why) return failList(why)
  if (event.created_at <= newestSigned) return
  newestSigned = event.created_at
  community.list = event
  community.members = membersOfList(event)
  keepMembersOnly(community.members)
  browser.setMembers(community.members)
  ui.count.textContent = countText(community.members.length)
  const signed = new Date(event.created_at * 1000).toLocaleString()
  setStatus('verified', `Verified list signed ${signed}`)
  ui.proofText.textContent =
    `This page asked the relay for its signed member list (a kind 13534 event, id ` +
    `${event.id}) and checked it in your browser: its id computed again from its content, ` +
    `its signature verified, and its author the relay's own key, ` +
    `${shortened(npubEncode(community.relayKey))}, as the relay's NIP-11 document names it.`
  ui.proof.hidden = false
  drawRunners()
  draw()
  changed('list')
}

function onRole(event) {
  // A definition that does not verify is left out: its members keep the role's id as label.
  if (event.kind !== KIND_ROLE || whyInvalid(event, community.relayKey)) return
  const role = roleFromEvent(event)
  if (role && community.roleBook.add(role)) changed('roles')
}

// The relay's address in the header: the one the browser used (behind a TLS proxy the
// server saw plain http), with a button that copies it.
function showRelayAddress() {
  const address = byId('relay-address')
  if (!address) return
  address.textContent = relayAddress(window.location)
  address.after(' ', copyButton('relay-address-copy', () => address.textContent))
}

async function start() {
  showRelayAddress()
  ui.search.disabled = false
  ui.search.addEventListener('input', () => {
    browser.setQuery(ui.search.value)
    draw()
  })
  ui.prev.addEventListener('click', () => {
    browser.move(-1)
    draw()
  })
  ui.next.addEventListener('click', () => {
    browser.move(1)
    draw()
  })
  watch((what) => {
    if ((what === 'roles' || what === 'profiles') && community.list) draw()
    if (what === 'profiles') drawRunners()
  })
  try {
    community.relayKey = (await relayInformation()).self
  } catch {
    community.relayKey = null
  }
  if (typeof community.relayKey !== 'string' || !/^[0-9a-f]{64}$/.test(community.relayKey)) {
    return failList("the relay's key could not be read from its NIP-11 document")
  }
  const relay = new RelayConnection(sameOriginRelayUrl(window.location))
  community.relay = relay
  relay.subscribe('list', { kinds: [KIND_MEMBER_LIST], limit: 1 }, onList, () => {
    if (!community.list && ui.status.dataset.state === 'loading') {
      setStatus('loading', 'The relay has no member list yet.')
    }
  })
  relay.subscribe('roles', { kinds: [KIND_ROLE] }, onRole)
  relay.connect()
  startAccount()
  startJoin()
  startDesk()
}

start()
