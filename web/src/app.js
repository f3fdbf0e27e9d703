// The community's page for a visitor: the live member list, checked in the browser, with
// search and paging. The server has already drawn the name, the description and the count,
// so the page says who the community is even without JavaScript.
import { MemberBrowser } from './browse.js'
import { countText, memberItem, membersOfList } from './members.js'
import { RelayConnection, relayInformation, sameOriginRelayUrl } from './relay.js'
import { RoleBook, roleFromEvent } from './roles.js'
import { whyInvalid } from './verify.js'

const KIND_MEMBER_LIST = 13534
const KIND_ROLE = 33534

const byId = (id) => document.getElementById(id)
const ui = {
  status: byId('list-status'),
  count: byId('member-count'),
  search: byId('member-search'),
  list: byId('member-list'),
  prev: byId('members-prev'),
  next: byId('members-next'),
  page: byId('members-page'),
}

const roleBook = new RoleBook()
const browser = new MemberBrowser()
let relayKey = null
let shownList = null // the verified list on screen
// The newest verified list's created_at, kept when a later list fails: a list replaces only a
// newer one, so an old list (genuinely signed, but replaced since) is never shown again.
let newestSigned = -1

function setStatus(state, text) {
  ui.status.dataset.state = state
  ui.status.textContent = text
}

function draw() {
  const view = browser.view(roleBook)
  ui.list.replaceChildren(...view.members.map((m) => memberItem(m, roleBook)))
  ui.page.textContent = `page ${view.page} of ${view.pages}`
  ui.prev.disabled = view.page <= 1
  ui.next.disabled = view.page >= view.pages
}

function failList(reason) {
  shownList = null
  browser.setMembers([])
  setStatus('failed', `This member list failed verification: ${reason}`)
  draw()
}

function onList(event) {
  if (event.kind !== KIND_MEMBER_LIST) return
  const why = whyInvalid(event, relayKey)
  if (why) return failList(why)
  if (event.created_at <= newestSigned) return
  newestSigned = event.created_at
  shownList = event
  browser.setMembers(membersOfList(event))
  ui.count.textContent = countText(browser.members.length)
  const signed = new Date(event.created_at * 1000).toLocaleString()
  setStatus('verified', `Verified list signed ${signed}`)
  draw()
}

function onRole(event) {
  // A definition that does not verify is left out: its members keep the role's id as label.
  if (event.kind !== KIND_ROLE || whyInvalid(event, relayKey)) return
  const role = roleFromEvent(event)
  if (role && roleBook.add(role) && shownList) draw()
}

async function start() {
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
  try {
    relayKey = (await relayInformation()).self
  } catch {
    relayKey = null
  }
  if (typeof relayKey !== 'string' || !/^[0-9a-f]{64}$/.test(relayKey)) {
    return failList("the relay's key could not be read from its NIP-11 document")
  }
  const relay = new RelayConnection(sameOriginRelayUrl(window.location))
  relay.subscribe('list', { kinds: [KIND_MEMBER_LIST], limit: 1 }, onList, () => {
    if (!shownList && ui.status.dataset.state === 'loading') {
      setStatus('loading', 'The relay has no member list yet.')
    }
  })
  relay.subscribe('roles', { kinds: [KIND_ROLE] }, onRole)
  relay.connect()
}

start()
