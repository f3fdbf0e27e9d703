// Join requests (under the `request` join policy): NIP-86's events needing moderation, each
// approved (allowevent: the requester is a member) or rejected (banevent, with a reason). Read
// as soon as the desk opens: their count leads the desk while any are pending. A request makes
// no new member list, so the list is asked again on demand too.
import { h } from '../dom.js'
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

// Who asks and their note: fields of their own beside NIP-86's id and reason (docs/relay.md,
// listeventsneedingmoderation). Null for an entry without a well-formed pubkey.
function requester(request) {
  if (typeof request.pubkey !== 'string' || !/^[0-9a-f]{64}$/.test(request.pubkey)) return null
  return { pubkey: request.pubkey, note: typeof request.note === 'string' ? request.note : null }
}

export function requestsPanel(desk) {
  if (!desk.may('listeventsneedingmoderation')) return null
  const { section, status } = panel(
    'desk-requests',
    'Join requests',
    'Under the "on request" join policy, people ask to join and wait here for an owner or admin.',
  )
  const check = button('desk-request-refresh', 'Check for new requests')
  const note = h('input', { id: 'desk-request-reason', type: 'text', maxlength: 1000 })
  const list = h('ul', { id: 'desk-request-list', class: 'desk-list' })
  const pager = new Pager(list, item, { empty: 'No pending requests.', what: 'requests' })
  section.append(
    desk.may('banevent') ? field('Reason for a rejection (optional, kept with it)', note) : null,
    h('div', { class: 'desk-row' }, check),
    status,
    list,
  )
  onAction(check, status, async () => {
    await desk.refresh(['requests'])
    const count = desk.data.requests?.length ?? 0
    return count === 1 ? '1 pending request.' : `${count} pending requests.`
  })

  function item(request) {
    const who = requester(request)
    // A button's name says whose request it answers.
    const act = (text, words, attributes) =>
      who ? personButton(null, text, words, who.pubkey, attributes) : button(null, text, attributes)
    const entry = h('li', { 'data-id': request.id })
    if (who) {
      entry.dataset.pubkey = who.pubkey
      entry.append(personNode(who.pubkey))
      if (who.note) entry.append(' ', h('span', { class: 'reason', text: who.note }))
    } else {
      entry.append(h('span', { class: 'reason', text: request.reason }))
    }
    if (desk.may('allowevent')) {
      const approve = act('Approve', 'Approve the request of', { class: 'request-approve' })
      onAction(approve, status, async () => {
        await desk.call('allowevent', [request.id])
        await desk.refresh(['requests'])
        return 'Request approved: a member now.'
      })
      entry.append(' ', approve)
    }
    if (desk.may('banevent')) {
      const reject = act('Reject', 'Reject the request of', { class: 'request-reject danger' })
      onAction(reject, status, async () => {
        await desk.call('banevent', [request.id, note.value.trim() || null])
        note.value = ''
        await desk.refresh(['requests'])
        return 'Request rejected: they may ask again after a day.'
      })
      entry.append(' ', reject)
    }
    return entry
  }

  let drawn = null
  function draw(failed) {
    const requests = desk.data.requests
    if (requests && requests !== drawn) {
      pager.draw(requests)
      drawn = requests
    }
    if (failed.requests) {
      say(status, 'error', `Could not list the requests. ${failure(failed.requests)}`)
    }
  }

  return {
    section,
    draw,
    title: 'Join requests',
    lists: ['requests'],
    count: () => desk.data.requests?.length ?? null,
  }
}
