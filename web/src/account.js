// Logging in: the person's NIP-07 signer tells the page who they are (its public key; the
// secret key stays in the signer). Shown only when a signer is there; what a person without
// one can do is the join section's to say.
import { npubEncode } from 'nostr-tools/nip19'
import { changed, community } from './community.js'
import { signerPubkey, waitForSigner } from './signer.js'

const byId = (id) => document.getElementById(id)

// Logs the signer's person in (once) and resolves their pubkey; throws with a sentence when
// the signer gives none. The login button comes here, and so does a part that acts for
// someone not yet logged in (the join button: one click logs in and joins).
export async function logIn() {
  if (community.me) return community.me
  const pubkey = await signerPubkey()
  if (community.me) return community.me // logged in meanwhile, by another click
  community.me = pubkey
  const name = byId('account-name')
  byId('login').hidden = true
  name.hidden = false
  name.textContent = `Logged in as ${npubEncode(pubkey)}`
  name.title = pubkey
  changed('me')
  return pubkey
}

export async function startAccount() {
  const login = byId('login')
  const status = byId('account-status')
  if (!(await waitForSigner())) return
  login.hidden = Boolean(community.me)
  login.addEventListener('click', async () => {
    status.textContent = ''
    try {
      await logIn()
    } catch (error) {
      status.textContent = `Could not log in: ${error.message}.`
    }
  })
}
