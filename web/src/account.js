// Logging in: the person's NIP-07 signer tells the page who they are (its public key; the
// secret key stays in the signer). Shown only when a signer is there; what a person without
// one can do is the join section's to say.
import { npubEncode } from 'nostr-tools/nip19'
import { changed, community } from './community.js'
import { signerPresent, signerPubkey, waitForSigner } from './signer.js'

const byId = (id) => document.getElementById(id)

export async function startAccount() {
  const login = byId('login')
  const name = byId('account-name')
  const status = byId('account-status')
  if (!(await waitForSigner())) return
  login.hidden = false
  login.addEventListener('click', async () => {
    status.textContent = ''
    try {
      community.me = await signerPubkey()
    } catch (error) {
      status.textContent = `Could not log in: ${error.message}.`
      return
    }
    login.hidden = true
    name.hidden = false
    name.textContent = `Logged in as ${npubEncode(community.me)}`
    name.title = community.me
    changed('me')
  })
}
