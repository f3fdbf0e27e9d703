// Joining (SPEC sections 7 and 8): an invite link's one-click join (/?claim=<code>), and for a
// visitor without one, a request to join or a join, as the community's policy allows (the
// server draws it on #join as data-join-policy). The person's own view is you.js's.
import { answerWord } from './answers.js'
import { askRelay, communityName, relayWords, say, signerHelp, statusLine } from './ask.js'
import { community, memberOf, watch } from './community.js'
import { copyButton, h } from './dom.js'
import { relayAddress } from './relay.js'
import { waitForSigner } from './signer.js'
import { startYou } from './you.js'

const KIND_JOIN_REQUEST = 28934
const MAX_NOTE = 1000 // the relay keeps this much of a note, and drops the rest
const FLOTILLA_JOIN = 'https://app.flotilla.social/join'

// What the relay's OK to a 28934 means: joined, already_member, a refusal of JOIN_REFUSALS,
// rate_limited, or error.
export function joinOutcome(answer) {
  if (answer.accepted) return answer.prefix === 'duplicate' ? 'already_member' : 'joined'
  if (answer.prefix === 'rate-limited') return 'rate_limited'
  return JOIN_REFUSALS[answerWord(answer.message)] ?? 'error'
}

// The relay's refusals of a 28934 (answers.js), by what the page calls them.
const JOIN_REFUSALS = {
  expired: 'expired',
  invalid: 'invalid',
  too_long: 'invalid',
  used_up: 'used_up',
  banned: 'banned',
  pending: 'pending',
  closed: 'closed',
  declined: 'declined',
  archived: 'archived',
}

const SENTENCES = {
  joined: (name) => `You joined ${name}. Welcome!`,
  already_member: (name) => `You are already a member of ${name}.`,
  invalid: () => 'That invite link is not valid; check it, or ask for a new one.',
  expired: () => 'That invite link has expired; ask for a new one.',
  used_up: () => 'That invite link has been used up; ask for a new one.',
  banned: () => 'You are banned from this community.',
  rate_limited: () => 'Too many tries for now; wait a few minutes, then try again.',
  pending: (name) =>
    `Your request to join ${name} is waiting for its owner or an admin to approve it.`,
  closed: (name) =>
    `${name} takes new members by invitation only; ask a member for an invite link.`,
  declined: () => 'Your request to join was declined; you may ask again later.',
  archived: (name) => `${name} is archived; it takes no new members.`,
}

// The Flotilla link for an invite code, both values encoded as the server's no-script link is.
export function flotillaLink(location, code) {
  const relay = relayAddress(location)
  return `${FLOTILLA_JOIN}?r=${encodeURIComponent(relay)}&c=${encodeURIComponent(code)}`
}

const byId = (id) => document.getElementById(id)

// Sends the 28934 from `button`'s click and says the answer in `status`; resolves the outcome.
async function join(button, status, tags, content = '') {
  button.disabled = true
  say(status, null, 'Asking the relay\u2026')
  let outcome
  let sentence
  try {
    const answer = await askRelay(KIND_JOIN_REQUEST, tags, content)
    outcome = joinOutcome(answer)
    sentence = outcome === 'error' ? `Could not join: ${relayWords(answer)}.` : null
  } catch (error) {
    outcome = 'error'
    sentence = `Could not join: ${error.message}.`
  }
  button.disabled = false
  say(status, outcome, sentence ?? SENTENCES[outcome](communityName()))
  return outcome
}

const isMember = () => Boolean(community.me && memberOf(community.me))

// Whether the person has a NIP-07 signer, once the page has waited for it (as data-signer
// on #join: a reader of the page knows the buttons that will come have come).
async function signerFound(section) {
  const found = await waitForSigner()
  section.dataset.signer = found ? 'present' : 'none'
  return found
}

// /?claim=<code>: a join button when the person has a signer; the server's no-signer help
// (Flotilla, the relay's address and the code) otherwise.
async function startInvite(section, code) {
  const status = statusLine('join-status')
  section.append(status)
  // The address the browser really used (behind a TLS proxy the server saw plain http).
  const flotilla = byId('join-flotilla')
  if (flotilla) flotilla.href = flotillaLink(window.location, code)
  const relay = byId('join-relay')
  if (relay) {
    relay.textContent = relayAddress(window.location)
    relay.after(' ', copyButton('join-relay-copy', () => relay.textContent))
  }
  if (!(await signerFound(section))) return
  byId('join-no-signer')?.setAttribute('hidden', '')
  const button = h(
    'button',
    { id: 'join-button', type: 'button' },
    `Join ${communityName()}`,
  )
  status.before(button)
  button.addEventListener('click', async () => {
    const outcome = await join(button, status, [['claim', code], ['-']])
    if (outcome === 'joined' || outcome === 'already_member') {
      button.hidden = true
      // The code has done its work: out of the address bar and the history.
      history.replaceState(history.state, '', window.location.pathname)
    }
  })
}

// A visitor without an invite: ask to join (request), join (open), or only the sentence that
// members join by invitation (invite). Hidden from a member, but for the answer just given.
async function startVisitor(section) {
  const policy = section.dataset.joinPolicy
  const name = communityName()
  const status = statusLine('join-status')
  const controls = h('div', { id: 'join-visitor' })
  section.append(controls, status)
  const show = () => {
    controls.hidden = isMember()
    section.hidden = controls.hidden && !status.textContent
  }
  watch((what) => {
    if (what === 'list' || what === 'me') show()
  })
  if (policy !== 'request' && policy !== 'open') {
    // invite, or unknown (the database did not answer the server): no way in but an invite.
    const words = `Members join ${name} by invitation: ask a member for an invite link.`
    controls.append(h('p', { id: 'join-policy' }, words))
    return show()
  }
  const asking = policy === 'request'
  controls.append(
    h(
      'p',
      { id: 'join-policy' },
      asking
        ? `Anyone may ask to join ${name}; its owner or an admin approves each request.`
        : `Anyone may join ${name}.`,
    ),
  )
  show()
  if (!(await signerFound(section))) {
    controls.append(signerHelp('join-no-signer', asking ? 'To ask to join' : 'To join'))
    return
  }
  const note = h('textarea', { id: 'request-note', rows: 3, maxlength: MAX_NOTE })
  const button = h(
    'button',
    { id: 'request-button', type: 'button' },
    asking ? 'Ask to join' : 'Join',
  )
  if (asking) {
    controls.append(
      h('label', { for: 'request-note' }, 'A note for the moderators (optional)'),
      note,
    )
  }
  controls.append(button)
  button.addEventListener('click', async () => {
    const outcome = await join(button, status, [['-']], asking ? note.value.trim() : '')
    if (outcome === 'pending' || outcome === 'joined') note.value = ''
    show()
  })
}

export function startJoin() {
  const section = byId('join')
  if (section) {
    const code = new URLSearchParams(window.location.search).get('claim')
    section.hidden = false
    if (code) startInvite(section, code)
    else startVisitor(section)
  }
  startYou()
}
