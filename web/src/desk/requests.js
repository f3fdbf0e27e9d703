// Join requests (under the `request` join policy): NIP-86's events needing moderation, each
// approved (allowevent: the requester is a member) or rejected (banevent, with a reason). A
// request makes no new member list, so the list is asked again on demand too.
import { h } from '../dom.js'
import { button, failure, field, onAction, panel, say } from './ui.js'

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
  section.append(
    h('div', { class: 'desk-row' }, check),
    desk.may('banevent') ? field('Reason for a rejection (optional, kept with it)', note) : null,
    status,
    list,
  )
  onAction(check, status, async () => {
    await desk.refresh(['requests'])
    const count = desk.data.requests?.length ?? 0
    return count === 1 ? '1 pending request.' : `${count} pending requests.`
  })

  function item(request) {
    const said = h('span', { class: 'reason', text: request.reason })
    const entry = h('li', { 'data-id': request.id }, said)
    if (desk.may('allowevent')) {
      const approve = button(null, 'Approve', { class: 'request-approve' })
      onAction(approve, status, async () => {
        await desk.call('allowevent', [request.id])
        await desk.refresh(['requests'])
        return 'Request approved: a member now.'
      })
      entry.append(' ', approve)
    }
    if (desk.may('banevent')) {
      const reject = button(null, 'Reject', { class: 'request-reject danger' })
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
      list.replaceChildren(...requests.map(item))
      if (!requests.length) list.append(h('li', { class: 'empty', text: 'No pending requests.' }))
      drawn = requests
    }
    if (failed.requests) {
      say(status, 'error', `Could not list the requests. ${failure(failed.requests)}`)
    }
  }

  return { section, draw }
}
