// The person's own view (SPEC section 8), once logged in: their membership as the verified
// list has it (base role and defined roles), making an invite link (a 28935 REQ: the relay
// mints a one-use invite if the community's quota leaves them one), and leaving (a 28936,
// after a confirmation on the page). It follows the live list: a person removed or banned
// elsewhere sees it change.
import { logIn } from './account.js'
import { answerWord } from './answers.js'
import { askRelay, communityName, relayWords, say, statusLine } from './ask.js'
import { community, memberOf, watch } from './community.js'
import { inviteLink } from './desk/invites.js'
import { h } from './dom.js'
import { roleBadge } from './members.js'
import { qrCode } from './qr.js'
import { Answer } from './relay.js'
import { sign } from './signer.js'
import { whyInvalid } from './verify.js'

const KIND_LEAVE_REQUEST = 28936
const KIND_INVITE = 28935

// What the relay's OK to a 28936 means (its answers by word, answers.js).
export function leaveOutcome(answer) {
  if (answer.accepted) return 'left'
  const word = answerWord(answer.message)
  return word === 'not_member' || word === 'is_owner' ? word : 'error'
}

const SENTENCES = {
  left: (name) => `You left ${name}.`,
  not_member: (name) => `You are not a member of ${name}.`,
  is_owner: () => 'The owner cannot leave; transfer ownership first.',
}

const BASE_ROLE_WORDS = { owner: 'the owner', admin: 'an admin', member: 'a member' }

// What the relay's CLOSED to a 28935 REQ means (its answers by word, answers.js).
export function inviteOutcome(reason) {
  if (reason.startsWith('rate-limited:')) return 'rate_limited'
  return INVITE_REFUSALS[answerWord(reason)] ?? 'error'
}

const INVITE_REFUSALS = {
  no_invites_left: 'no_invites_left',
  members_only_invites: 'not_member',
  archived: 'archived',
}

const INVITE_SENTENCES = {
  made: (until) => `Your invite link is ready: one person can join with it, until ${until}.`,
  no_invites_left: () => 'You have no invites left.',
  not_member: () => 'Only members can make invite links.',
  rate_limited: () => 'You have made as many invite links as the relay allows for now; try later.',
  archived: () => 'This community is archived: no one can join it now.',
}

// Asks the relay for an invite as the person (logged in, AUTHed: the relay mints only for a
// member it knows), and checks the answer before trusting its code: signed by the relay key,
// for this person. Resolves {outcome, code, expiration} or {outcome, reason} for a refusal;
// throws with a sentence when the signer, the relay or the invite fails.
async function askForInvite() {
  if (!community.relay) throw new Error('the page has no connection to the relay')
  const pubkey = await logIn()
  const auth = await community.relay.authenticate(pubkey, (template) => sign(pubkey, template))
  if (!auth.accepted) throw new Error(`the relay did not accept your login (${auth.message})`)
  const { events, closed } = await community.relay.requestOnce({ kinds: [KIND_INVITE], limit: 1 })
  if (closed !== null) return { outcome: inviteOutcome(closed), reason: closed }
  const invite = events.find((event) => event?.kind === KIND_INVITE)
  if (!invite) throw new Error('the relay answered with no invite')
  const why = whyInvalid(invite, community.relayKey)
  if (why) throw new Error(`the invite the relay sent failed verification: ${why}`)
  const tag = (name) => invite.tags.find((t) => t[0] === name)?.[1]
  if (tag('p') !== pubkey) throw new Error('the invite the relay sent is not for you')
  const code = tag('claim')
  if (!code) throw new Error('the invite the relay sent has no code')
  return { outcome: 'made', code, expiration: Number(tag('expiration')) }
}

// "Make an invite link": the button, the answer in words, and the link (selectable) with its
// QR code once made.
function inviteMaker() {
  const button = h('button', { id: 'you-invite', type: 'button' }, 'Make an invite link')
  const status = statusLine('you-invite-status')
  const link = h('input', {
    id: 'you-invite-link',
    type: 'text',
    readonly: true,
    autocomplete: 'off',
    spellcheck: 'false',
  })
  const qr = h('div', { id: 'you-invite-qr' })
  const made = h(
    'div',
    { id: 'you-invite-made', hidden: true },
    h('label', { for: 'you-invite-link' }, 'Your invite link'),
    link,
    qr,
  )
  link.addEventListener('focus', () => link.select())
  button.addEventListener('click', async () => {
    if (button.disabled) return
    button.disabled = true
    say(status, null, 'Asking the relay\u2026')
    let outcome
    let sentence
    try {
      const answer = await askForInvite()
      outcome = answer.outcome
      if (outcome === 'made') {
        link.value = inviteLink(answer.code)
        qr.replaceChildren(qrCode(link.value, 'QR code of your invite link'))
        made.hidden = false
        sentence = INVITE_SENTENCES.made(new Date(answer.expiration * 1000).toLocaleString())
      } else if (outcome === 'error') {
        sentence = `Could not make an invite link: ${relayWords(new Answer(false, answer.reason))}.`
      } else {
        sentence = INVITE_SENTENCES[outcome]()
      }
    } catch (error) {
      outcome = 'error'
      sentence = `Could not make an invite link: ${error.message}.`
    }
    button.disabled = false
    say(status, outcome, sentence)
  })
  return h('div', { id: 'you-invite-area' }, button, status, made)
}


export function startYou() {
  const section = document.getElementById('you')
  if (!section) return
  const role = h('div', { id: 'you-role' })
  const leave = h(
    'button',
    { id: 'leave-button', type: 'button', 'aria-expanded': 'false' },
    'Leave this community',
  )
  const confirm = h('button', { id: 'leave-confirm', type: 'button' }, 'Yes, leave')
  const cancel = h('button', { id: 'leave-cancel', type: 'button' }, 'Cancel')
  const question = h('p', { id: 'leave-question' })
  const asking = h(
    'div',
    { id: 'leave-ask', role: 'group', 'aria-labelledby': 'leave-question', hidden: true },
    question,
    confirm,
    cancel,
  )
  const status = statusLine('you-status')
  const invites = inviteMaker()
  section.append(
    h('h2', { id: 'you-title' }, 'Your membership'),
    role,
    invites,
    leave,
    asking,
    status,
  )

  const ask = (open) => {
    asking.hidden = !open
    leave.setAttribute('aria-expanded', String(open))
  }

  function draw() {
    section.hidden = !community.me
    if (!community.me) return
    const name = communityName()
    const member = community.list ? memberOf(community.me) : null
    role.dataset.state = !community.list ? 'unknown' : member ? 'member' : 'not_member'
    if (!community.list) {
      role.replaceChildren(
        h('p', {}, 'Your membership is shown once the member list is verified.'),
      )
    } else if (!member) {
      role.replaceChildren(h('p', {}, `You are not a member of ${name}.`))
    } else {
      const words = BASE_ROLE_WORDS[member.baseRole] ?? `a ${member.baseRole}`
      const badge = (id) => roleBadge(id, community.roleBook)
      const held = member.roles.length
        ? [h('p', {}, 'Your roles: ', ...member.roles.flatMap((id) => [badge(id), ' ']))]
        : []
      role.replaceChildren(h('p', {}, `You are ${words} of ${name}.`), ...held)
    }
    role.dataset.baseRole = member?.baseRole ?? ''
    leave.hidden = !member
    invites.hidden = !member
    if (!member) ask(false)
  }

  leave.addEventListener('click', () => {
    question.textContent = `Leave ${communityName()}? To come back you would have to join again.`
    ask(true)
    cancel.focus() // the safe choice first
  })
  cancel.addEventListener('click', () => {
    ask(false)
    leave.focus()
  })
  confirm.addEventListener('click', async () => {
    confirm.disabled = cancel.disabled = true
    say(status, null, 'Asking the relay\u2026')
    let outcome
    let sentence
    try {
      const answer = await askRelay(KIND_LEAVE_REQUEST, [['-']])
      outcome = leaveOutcome(answer)
      sentence = outcome === 'error' ? `Could not leave: ${relayWords(answer)}.` : null
    } catch (error) {
      outcome = 'error'
      sentence = `Could not leave: ${error.message}.`
    }
    confirm.disabled = cancel.disabled = false
    ask(false)
    say(status, outcome, sentence ?? SENTENCES[outcome](communityName()))
  })

  watch(draw)
  draw()
}
