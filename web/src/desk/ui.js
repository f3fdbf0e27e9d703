// What every panel of the desk shares: a panel with its heading and its status line, labelled
// fields, the action runner (one NIP-86 call per click, the button disabled while it runs, the
// answer in words), the in-page confirmation for what cannot be undone, a person as every list
// draws them, and a list drawn a page at a time.
import { decode, npubEncode } from 'nostr-tools/nip19'
import { h } from '../dom.js'
import { ManagementError } from '../nip86.js'
import { personName, personNodes } from '../people.js'

// Every community has them (SPEC section 6): relabelled, never defined or deleted.
export const BASE_ROLES = ['owner', 'admin', 'member']


// A one-line text field for keys, codes and ids: no autocomplete, no spelling marks.
export function keyInput(id, attributes = {}) {
  return h('input', { id, type: 'text', autocomplete: 'off', spellcheck: 'false', ...attributes })
}

export function button(id, text, attributes = {}) {
  return h('button', { type: 'button', id, text, ...attributes })
}

// A label above its control (the control needs an id).
export function field(label, control, hint) {
  const hintNode = hint ? h('small', { class: 'hint', id: `${control.id}-hint`, text: hint }) : null
  if (hintNode) control.setAttribute('aria-describedby', hintNode.id)
  const labelNode = h('label', { for: control.id, text: label })
  return h('div', { class: 'field' }, labelNode, control, hintNode)
}

// A section of the desk: a tab panel named by its heading, and the status line that says, in
// words, how its last action went (data-outcome: ok, error, or busy while a call runs). It is
// hidden until its tab is chosen (desk.js).
export function panel(id, title, intro) {
  const status = h('p', { id: `${id}-status`, class: 'desk-status', role: 'status' })
  const section = h(
    'section',
    { id, class: 'desk-panel', role: 'tabpanel', 'aria-labelledby': `${id}-title`, hidden: true },
    h('h3', { id: `${id}-title`, text: title }),
    intro ? h('p', { class: 'hint', text: intro }) : null,
  )
  return { section, status }
}

export function say(status, outcome, words) {
  status.dataset.outcome = outcome
  status.textContent = words
}

// The words for a failed call: the relay's own (with its HTTP status), or the signer's.
export function failure(error) {
  if (error instanceof ManagementError) {
    if (!error.status) return `Not done: ${error.message}.`
    return `Refused (HTTP ${error.status}): ${error.message}`
  }
  return `Not done: ${error?.message ?? error}.`
}

// Runs `work` when `trigger` is clicked: the button disabled while it runs, `status` busy,
// then ok with the words `work` resolves, or error with the relay's words. `confirmation`
// (for what cannot be undone) gives [question, yes] to ask first; it may throw to refuse
// what was typed. A button that had the focus gets it back (a disabled button drops it), so
// Tab and Enter go on from there.
export function onAction(trigger, status, work, confirmation = null) {
  trigger.addEventListener('click', async () => {
    if (trigger.disabled) return
    trigger.disabled = true
    trigger.setAttribute('aria-busy', 'true')
    try {
      if (confirmation && !(await confirmInPage(...confirmation()))) {
        say(status, 'cancelled', 'Cancelled: nothing was sent.')
        return
      }
      say(status, 'busy', 'Sending to the relay…')
      say(status, 'ok', await work())
    } catch (error) {
      say(status, 'error', failure(error))
    } finally {
      trigger.disabled = false
      trigger.removeAttribute('aria-busy')
      if (document.activeElement === document.body || document.activeElement === null) {
        trigger.focus()
      }
    }
  })
}

// The confirmation for what changes a person or cannot be undone: a modal <dialog> in the
// page (not window.confirm; above the member's own dialog when that is open), Cancel focused
// first, Escape cancels. Resolves true for "yes".
let dialog = null
export function confirmInPage(question, yesText) {
  if (!dialog) {
    dialog = h(
      'dialog',
      { id: 'desk-confirm', 'aria-labelledby': 'desk-confirm-text' },
      h('p', { id: 'desk-confirm-text' }),
      h(
        'div',
        { class: 'desk-row' },
        button('desk-confirm-no', 'Cancel', { autofocus: true }),
        button('desk-confirm-yes', 'Yes', { class: 'danger' }),
      ),
    )
    document.body.append(dialog)
  }
  dialog.querySelector('#desk-confirm-text').textContent = question
  const yes = dialog.querySelector('#desk-confirm-yes')
  const no = dialog.querySelector('#desk-confirm-no')
  yes.textContent = yesText
  return new Promise((resolve) => {
    const close = (answer) => {
      yes.removeEventListener('click', onYes)
      no.removeEventListener('click', onNo)
      dialog.removeEventListener('cancel', onNo)
      if (dialog.open) dialog.close()
      resolve(answer)
    }
    const onYes = () => close(true)
    const onNo = (event) => {
      event?.preventDefault()
      close(false)
    }
    yes.addEventListener('click', onYes)
    no.addEventListener('click', onNo)
    dialog.addEventListener('cancel', onNo)
    dialog.showModal()
    no.focus()
  })
}

// The hex pubkey of what was typed: an npub (decoded here) or 64 hex characters; anything
// else is sent as typed, for the relay to refuse in its own words.
export function typedPubkey(text) {
  const typed = text.trim()
  if (typed.startsWith('npub1')) {
    let decoded
    try {
      decoded = decode(typed)
    } catch {
      throw new Error('that npub does not decode (a character missing or mistyped?)')
    }
    if (decoded.type !== 'npub') throw new Error('that is not an npub')
    return decoded.data
  }
  return /^[0-9a-fA-F]{64}$/.test(typed) ? typed.toLowerCase() : typed
}

function npubOf(pubkey) {
  try {
    return npubEncode(pubkey)
  } catch {
    return null // not a key: shown as the relay sent it
  }
}

// A person in a list: the page's own drawing (picture, name, short npub), in a span that
// redraw() draws again when names arrive.
export function personNode(pubkey) {
  const npub = npubOf(pubkey)
  const node = h('span', { class: 'person' })
  node.dataset.pubkey = pubkey
  if (npub) node.append(...personNodes(pubkey, npub))
  else node.append(h('code', { class: 'npub', text: pubkey }))
  return node
}

// A button whose accessible name ends with a person's name (`words` first): relabelled by
// redrawPeople as names arrive.
export function personButton(id, text, words, pubkey, attributes = {}) {
  const node = button(id, text, attributes)
  node.dataset.names = pubkey
  node.dataset.words = words
  node.setAttribute('aria-label', `${words} ${personName(pubkey)}`)
  return node
}

// Every person drawn under `root` drawn again, and every button naming one relabelled: what
// the page knows of people's names has grown.
export function redrawPeople(root) {
  for (const node of root.querySelectorAll('.person[data-pubkey]')) {
    node.replaceWith(personNode(node.dataset.pubkey))
  }
  for (const node of root.querySelectorAll('button[data-names]')) {
    node.setAttribute('aria-label', `${node.dataset.words} ${personName(node.dataset.names)}`)
  }
}

// A list drawn a page at a time, so that a long one (10,000 members' invites, a branch of the
// tree) puts few controls in the document: the first `size` items, then a "more" button at
// its end that shows `size` more and takes the focus to the first of them. Drawn again with
// new items, it shows as many as before.
export class Pager {
  constructor(list, makeItem, { size = 20, empty = null, what = 'more' } = {}) {
    Object.assign(this, { list, makeItem, size, empty, what })
    this.items = []
    this.count = size
    this.more = button(null, '', { class: 'list-more' })
    this.moreItem = h('li', { class: 'more' }, this.more)
    this.more.addEventListener('click', () => this.showMore())
  }

  draw(items) {
    this.items = items
    const shown = items.slice(0, this.count).map(this.makeItem)
    this.list.replaceChildren(...shown)
    if (!items.length && this.empty) this.list.append(h('li', { class: 'empty', text: this.empty }))
    this.drawMore()
  }

  drawMore() {
    const left = this.items.length - this.count
    if (left > 0) {
      const next = Math.min(left, this.size)
      this.more.textContent = `Show ${next} more ${this.what} (${left} not shown)`
      this.list.append(this.moreItem)
    } else {
      this.moreItem.remove()
    }
  }

  showMore() {
    const next = this.items.slice(this.count, this.count + this.size).map(this.makeItem)
    this.count += this.size
    this.moreItem.before(...next)
    this.drawMore()
    if (next.length) {
      next[0].tabIndex = -1
      next[0].focus()
    }
  }
}

export function when(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleString()
}
