// A person as every list of the page draws them: a picture drawn here from their key (an
// identicon: no image is fetched, from anywhere), the name they gave themselves (their kind 0,
// as text) when the relay keeps one, and their npub, shortened, the whole one in its title.
import { npubEncode } from 'nostr-tools/nip19'
import { h } from './dom.js'
import { drawing, nameOf } from './profiles.js'

const SVG = 'http://www.w3.org/2000/svg'
const GRID = 5 // cells a side; the left three columns are mirrored onto the right two

// An npub shortened for a line: its start and its end.
export function shortened(npub) {
  return npub.length > 24 ? `${npub.slice(0, 14)}…${npub.slice(-6)}` : npub
}

// The identicon of a 64-hex pubkey: a 5 x 5 symmetric pattern of cells in one hue, both from
// the key, as SVG elements (never markup). Decorative: the npub beside it names the person.
export function identicon(pubkey) {
  const svg = document.createElementNS(SVG, 'svg')
  svg.setAttribute('class', 'identicon')
  svg.setAttribute('viewBox', `0 0 ${GRID} ${GRID}`)
  svg.setAttribute('aria-hidden', 'true')
  svg.setAttribute('focusable', 'false')
  const hue = parseInt(pubkey.slice(0, 4), 16) % 360
  const background = document.createElementNS(SVG, 'rect')
  background.setAttribute('width', String(GRID))
  background.setAttribute('height', String(GRID))
  background.setAttribute('fill', `hsl(${hue} 45% 92%)`)
  svg.append(background)
  const bits = parseInt(pubkey.slice(4, 8), 16) // 16 bits; the 15 cells of three columns
  for (let column = 0; column < 3; column++) {
    for (let row = 0; row < GRID; row++) {
      if (!((bits >> (column * GRID + row)) & 1)) continue
      for (const x of new Set([column, GRID - 1 - column])) {
        const cell = document.createElementNS(SVG, 'rect')
        cell.setAttribute('x', String(x))
        cell.setAttribute('y', String(row))
        cell.setAttribute('width', '1')
        cell.setAttribute('height', '1')
        cell.setAttribute('fill', `hsl(${hue} 55% 38%)`)
        svg.append(cell)
      }
    }
  }
  return svg
}

// The picture, the name and the short npub of one person, as a line's first part.
export function personNodes(pubkey, npub) {
  const key = h('code', { class: 'npub', title: npub }, shortened(npub))
  key.dataset.npub = npub
  drawing(pubkey)
  const name = nameOf(pubkey)
  if (name === null) return [identicon(pubkey), key]
  return [identicon(pubkey), h('span', { class: 'person-name' }, name), ' ', key]
}

// How a sentence names a person (a confirmation, a status, a button's name): their name, else
// their short npub, else the text as the relay sent it (not a key).
export function personName(pubkey) {
  const name = nameOf(pubkey)
  if (name !== null) return name
  try {
    return shortened(npubEncode(pubkey))
  } catch {
    return pubkey
  }
}
