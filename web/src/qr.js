// A QR code as SVG built with DOM calls: the Content-Security-Policy's img-src refuses a
// data: URL image, and an <svg> in the document is no image request at all. The encoding is
// uqr's (a port of Nayuki's QR Code generator); the drawing is one path of dark modules on a
// light square, colored by desk.css (dark on light in either color scheme, as scanners want).
import { encode } from 'uqr'

const SVG = 'http://www.w3.org/2000/svg'
const QUIET_ZONE = 4 // modules of light margin, as the QR standard asks

export function qrCode(text, label) {
  // Level M: a printed or photographed code still reads with 15% of it damaged.
  const { data, size } = encode(text, { ecc: 'M', border: QUIET_ZONE })
  const svg = document.createElementNS(SVG, 'svg')
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`)
  svg.setAttribute('role', 'img')
  svg.setAttribute('aria-label', label)
  svg.setAttribute('shape-rendering', 'crispEdges')
  svg.classList.add('qr')
  const light = document.createElementNS(SVG, 'rect')
  light.setAttribute('width', String(size))
  light.setAttribute('height', String(size))
  light.classList.add('qr-light')
  const dark = document.createElementNS(SVG, 'path')
  const steps = []
  data.forEach((row, y) =>
    row.forEach((on, x) => {
      if (on) steps.push(`M${x} ${y}h1v1h-1z`)
    }),
  )
  dark.setAttribute('d', steps.join(''))
  dark.classList.add('qr-dark')
  svg.append(light, dark)
  return svg
}
