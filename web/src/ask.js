// What joining and leaving share: asking the relay as the person (logged in with their
// signer, AUTHed on the page's websocket, the event signed by the signer), and saying the
// answer in a status line.
import { logIn } from './account.js'
import { community } from './community.js'
import { h } from './dom.js'
import { sign } from './signer.js'

// Sends {kind, tags, content} as the person, after AUTH (NIP-42: the relay takes a 28934
// with "-" and every 28936 only from their AUTHed author). Resolves the relay's Answer;
// throws with a sentence when the signer or the relay fails first.
export async function askRelay(kind, tags, content = '') {
  if (!community.relay) throw new Error('the page has no connection to the relay')
  const pubkey = await logIn()
  const auth = await community.relay.authenticate(pubkey, (template) => sign(pubkey, template))
  if (!auth.accepted) throw new Error(`the relay did not accept your login (${auth.message})`)
  return community.relay.publish(await sign(pubkey, { kind, tags, content }))
}

// The relay's words without their machine-readable prefix and final stop, to go in a sentence.
export function relayWords(answer) {
  const words = answer.prefix ? answer.message.slice(answer.prefix.length + 1) : answer.message
  return words.trim().replace(/\.$/, '') || 'the relay gave no reason'
}

// The community's name as the server drew it.
export function communityName() {
  return document.getElementById('community-name')?.textContent.trim() || 'this community'
}

// A status line's answer: its outcome for whoever reads the page (null while asking), its
// sentence, and the focus, so a keyboard user carries on from the answer.
export function say(status, outcome, text) {
  if (outcome) status.dataset.outcome = outcome
  else delete status.dataset.outcome
  status.textContent = text
  if (outcome) status.focus()
}

// A status line that can take the focus (role=status: read out as it changes).
export function statusLine(id) {
  return h('p', { id, class: 'answer', role: 'status', tabindex: -1 })
}


// How to get a NIP-07 signer, in words (the extensions named, each a plain link).
export function signerHelp(id, lead) {
  const link = (href, text) => h('a', { href, rel: 'noopener noreferrer' }, text)
  return h(
    'p',
    { id },
    `${lead} you need a Nostr signer: a browser extension (NIP-07) such as `,
    link('https://github.com/fiatjaf/nos2x', 'nos2x'),
    ' or ',
    link('https://getalby.com/', 'Alby'),
    '.',
  )
}
