// Invites: create one (uses, lifetime, a code drawn here or typed) with createclaim and show
// its link and QR code; one list of every invite, newest first, with its uses, expiry and
// maker (listinvites), each revoked by its id (revokeinvite); and the link of a live code made
// earlier (listclaims) chosen in a select, shown as a new one is, and revoked by its code
// (deleteclaim). The relay names no invite's code in listinvites, so the codes are not a
// second list but a way back to a link.
import { qrCode } from '../qr.js'
import { h } from '../dom.js'
import {
  button,
  failure,
  field,
  keyInput,
  onAction,
  Pager,
  panel,
  personNode,
  say,
  when,
} from './ui.js'

const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const CODE_LENGTH = 22 // 22 of 62 symbols: over 128 bits, beyond guessing
const LIFETIMES = [
  [3600, '1 hour'],
  [86400, '1 day'],
  [3 * 86400, '3 days'],
  [7 * 86400, '7 days'],
  [30 * 86400, '30 days'],
]
const DEFAULT_LIFETIME = 7 * 86400
const REVOKED = 'Invite revoked: its code no longer works.'

// A code from crypto.getRandomValues; bytes of 248 and over are dropped so that every symbol
// is equally likely (248 = 4 x 62).
export function randomCode(length = CODE_LENGTH) {
  const symbols = []
  while (symbols.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && symbols.length < length) symbols.push(CODE_ALPHABET[byte % 62])
    }
  }
  return symbols.join('')
}

export function inviteLink(code) {
  return `${window.location.origin}/?claim=${encodeURIComponent(code)}`
}

function lifetimeText(seconds) {
  return LIFETIMES.find(([s]) => s === seconds)?.[1] ?? `${seconds} seconds`
}

function wholeNumber(input, what) {
  const value = Number(input.value)
  if (input.value.trim() === '' || !Number.isInteger(value)) {
    throw new Error(`${what} must be a whole number`)
  }
  return value
}

export function invitesPanel(desk) {
  if (!['createclaim', 'listclaims', 'listinvites'].some((m) => desk.may(m))) return null
  const { section, status } = panel(
    'desk-invites',
    'Invites',
    'An invite link lets whoever opens it join, as many times as it has uses, until it expires.',
  )

  // What an invite just made (or a live code chosen below) looks like: its link and QR code,
  // and a way to revoke it at once.
  const link = keyInput('desk-invite-link', { readonly: true })
  const copy = button('desk-invite-copy', 'Copy link', { hidden: !navigator.clipboard?.writeText })
  const revokeShown = button('desk-invite-made-revoke', 'Revoke this link', { class: 'danger' })
  const qr = h('div', { id: 'desk-invite-qr' })
  const made = h(
    'div',
    { id: 'desk-invite-made', class: 'desk-invite', hidden: true },
    h('div', { class: 'desk-row' }, field('Invite link', link), copy),
    qr,
    desk.may('deleteclaim') ? h('div', { class: 'desk-row' }, revokeShown) : null,
  )
  link.addEventListener('focus', () => link.select())
  onAction(copy, status, async () => {
    await navigator.clipboard.writeText(link.value)
    return 'Link copied.'
  })
  let shownCode = null
  onAction(
    revokeShown,
    status,
    async () => {
      const code = shownCode
      const revoked = await desk.call('deleteclaim', [code])
      if (shownCode === code) made.hidden = true
      await desk.refresh(['claims', 'invites'])
      return revoked ? REVOKED : 'That code was no longer live.'
    },
    () => ['Revoke this invite? Its link stops working at once.', 'Revoke'],
  )

  function show(code) {
    shownCode = code
    link.value = inviteLink(code)
    qr.replaceChildren(qrCode(link.value, 'QR code of the invite link'))
    made.hidden = false
  }

  if (desk.may('createclaim')) {
    const uses = h('input', {
      id: 'desk-invite-uses',
      type: 'number',
      min: 1,
      max: 10000,
      value: 1,
    })
    const lifetime = h(
      'select',
      { id: 'desk-invite-ttl' },
      ...LIFETIMES.map(([seconds, text]) =>
        h('option', { value: seconds, selected: seconds === DEFAULT_LIFETIME, text }),
      ),
    )
    const code = keyInput('desk-invite-code', { maxlength: 128 })
    const create = button('desk-invite-create', 'Create invite')
    section.append(
      h(
        'div',
        { class: 'desk-row fields' },
        field('Uses', uses),
        field('Lifetime', lifetime),
        field(
          'Code (optional)',
          code,
          `Left empty: ${CODE_LENGTH} random letters and digits. ` +
            'Your own: 8 to 128 of A-Z, a-z, 0-9, _ and -.',
        ),
      ),
      h('div', { class: 'desk-row' }, create),
    )
    onAction(create, status, async () => {
      const count = wholeNumber(uses, 'Uses')
      const seconds = Number(lifetime.value)
      const chosen = code.value.trim() || randomCode()
      await desk.call('createclaim', [chosen, count, seconds])
      code.value = ''
      show(chosen)
      await desk.refresh(['claims', 'invites'])
      const times = count === 1 ? '1 use' : `${count} uses`
      const lasting = lifetimeText(seconds)
      return `Invite created: ${times}, for ${lasting}. Its link and QR code are below.`
    })
  }
  section.append(status, made)

  // The live codes made earlier: one select, however many there are.
  const pick = h('select', { id: 'desk-claim-pick' })
  const showPicked = button('desk-claim-show', 'Show its link and QR code')
  const picker = h(
    'div',
    { id: 'desk-claims', class: 'desk-row', hidden: true },
    field('A live code made here', pick),
    showPicked,
  )
  showPicked.addEventListener('click', () => {
    if (!pick.value) return
    show(pick.value)
    link.focus()
  })
  if (desk.may('listclaims')) section.append(picker)

  const invites = h('ul', { id: 'desk-invite-list', class: 'desk-list' })
  const pager = new Pager(invites, (invite) => inviteItem(invite, Date.now() / 1000), {
    empty: 'No invites.',
    what: 'invites',
  })
  if (desk.may('listinvites')) {
    section.append(h('h4', { text: 'Every invite, newest first' }), invites)
  }

  function inviteItem(invite, now) {
    const used = invite.max_uses === null
      ? `used ${invite.use_count} times (no limit)`
      : `used ${invite.use_count} of ${invite.max_uses}`
    const state = invite.expires_at <= now
      ? 'expired'
      : invite.max_uses !== null && invite.use_count >= invite.max_uses
        ? 'used up'
        : 'live'
    const item = h(
      'li',
      { 'data-id': invite.id, 'data-state': state },
      h('span', { class: 'invite-state', text: state }),
      ` ${used}; ${state === 'expired' ? 'expired' : 'expires'} ${when(invite.expires_at)};`,
      ' made by ',
      personNode(invite.created_by),
    )
    if (desk.may('revokeinvite')) {
      const revoke = button(null, 'Revoke', { class: 'invite-revoke danger' })
      onAction(
        revoke,
        status,
        async () => {
          const revoked = await desk.call('revokeinvite', [invite.id])
          await desk.refresh(['claims', 'invites'])
          return revoked ? REVOKED : 'That invite was gone already.'
        },
        () => ['Revoke this invite? Its code stops working at once.', 'Revoke'],
      )
      item.append(' ', revoke)
    }
    return item
  }

  const live = (invite, now) =>
    invite.expires_at > now && (invite.max_uses === null || invite.use_count < invite.max_uses)

  // Redrawn only when a list came again, so a focused button stays where it is otherwise.
  let drawn = {}
  function draw(failed) {
    const { claims: codes, invites: all } = desk.data
    if (codes && codes !== drawn.codes) {
      const chosen = pick.value
      pick.replaceChildren(
        ...codes.map((code) => h('option', { value: code, text: code, selected: code === chosen })),
      )
      picker.hidden = !codes.length
    }
    if (all && all !== drawn.all) pager.draw([...all].reverse())
    drawn = { codes, all }
    const error = failed.claims ?? failed.invites
    if (error) say(status, 'error', `Could not list the invites. ${failure(error)}`)
  }

  return {
    section,
    draw,
    title: 'Invites',
    lists: ['invites', 'claims'],
    count: () => {
      const all = desk.data.invites
      if (!all) return null
      const now = Date.now() / 1000
      return `${all.filter((invite) => live(invite, now)).length} live`
    },
  }
}
