// What every panel of the desk shares: a panel with its heading and its status line, labelled
// fields, the action runner (one NIP-86 call per click, the button disabled while it runs, the
// answer in words) and the in-page confirmation for what cannot be undone.
import { decode, npubEncode } from 'nostr-tools/nip19'
import { h } from '../dom.js'
import { ManagementError } from '../nip86.js'
import { shortened } from '../people.js'

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

// A panel of the desk: a region named by its heading, and the status line that says, in
// words, how its last action went (data-outcome: ok, error, or busy while a call runs).
export function panel(id, title, intro) {
  const status = h('p', { id: `${id}-status`, class: 'desk-status', role: 'status' })
  const section = h(
    'section',
    { id, class: 'desk-panel', 'aria-labelledby': `${id}-title` },
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

// The confirmation for destructive actions: a modal <dialog> in the page (not
// window.confirm), Cancel focused first, Escape cancels. Resolves true for "yes".
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

// A pubkey's npub shortened for a line.
export function shortNpub(pubkey) {
  try {
    return shortened(npubEncode(pubkey))
  } catch {
    return pubkey
  }
}

export function npubNode(pubkey) {
  let npub = pubkey
  try {
    npub = npubEncode(pubkey)
  } catch {
    // shown as the relay sent it
  }
  return h('code', { class: 'npub', title: pubkey, text: npub })
}

export function when(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleString()
}
