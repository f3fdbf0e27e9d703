// The person's own view (SPEC section 8), once logged in: their membership as the verified
// list has it (base role and defined roles), and leaving (a 28936, after a confirmation on
// the page). It follows the live list: a person removed or banned elsewhere sees it change.
import { askRelay, communityName, relayWords, say, statusLine } from './ask.js'
import { community, memberOf, watch } from './community.js'
import { h } from './dom.js'
import { roleBadge } from './members.js'

const KIND_LEAVE_REQUEST = 28936

// What the relay's OK to a 28936 means (SPEC section 7's refusals, word for word).
export function leaveOutcome(answer) {
  if (answer.accepted) return 'left'
  if (answer.message.includes('you are not a member')) return 'not_member'
  if (answer.message.includes('the owner cannot leave')) return 'is_owner'
  return 'error'
}

const SENTENCES = {
  left: (name) => `You left ${name}.`,
  not_member: (name) => `You are not a member of ${name}.`,
  is_owner: () => 'The owner cannot leave; transfer ownership first.',
}

const BASE_ROLE_WORDS = { owner: 'the owner', admin: 'an admin', member: 'a member' }


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
  section.append(
    h('h2', { id: 'you-title' }, 'Your membership'),
    role,
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
