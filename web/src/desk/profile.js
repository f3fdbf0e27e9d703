// The community's profile and join policy: changerelayname, changerelaydescription,
// changerelayicon and setjoinpolicy, one call per save. What the server drew at the top of the
// page (name, description, icon) follows each change without a reload.
import { h } from '../dom.js'
import { button, field, onAction, panel } from './ui.js'

const POLICIES = [
  ['invite', 'By invite only'],
  ['request', 'On request: an owner or admin approves'],
  ['open', 'Open: whoever asks joins'],
]

const byId = (id) => document.getElementById(id)

// The page's own header, as the server draws it (page.py), changed in place.
function showName(name) {
  const shown = name || window.location.host // the server names a community by its host too
  byId('community-name').textContent = shown
  document.title = shown
}

function showDescription(text) {
  let description = byId('community-description')
  if (!text) return description?.remove()
  if (!description) {
    description = h('p', { id: 'community-description' })
    document.querySelector('header.community').after(description)
  }
  description.textContent = text
}

function originOf(url) {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

// The page may show images from the icon's origin it was served with, and no other (its
// Content-Security-Policy): an icon from elsewhere shows when the page is loaded again.
let servedIconOrigin

function showIcon(url) {
  let icon = byId('community-icon')
  if (!url) return icon?.remove()
  if (originOf(url) !== servedIconOrigin) return
  if (!icon) {
    icon = h('img', { id: 'community-icon', alt: '' })
    document.querySelector('header.community').prepend(icon)
  }
  icon.src = url
}

export function profilePanel(desk) {
  servedIconOrigin = originOf(byId('community-icon')?.getAttribute('src'))
  const fields = [
    {
      method: 'changerelayname',
      what: 'name',
      id: 'desk-profile-name',
      label: 'Name (at most 64 characters; empty: the host)',
      control: h('input', { type: 'text', maxlength: 64 }),
      now: () => byId('community-name')?.textContent ?? '',
      asTyped: true,
      show: showName,
      done: (value) => (value ? `Name saved: ${value}.` : 'Name cleared: the page shows the host.'),
    },
    {
      method: 'changerelaydescription',
      what: 'description',
      id: 'desk-profile-description',
      label: 'Description (at most 2,000 characters)',
      control: h('textarea', { rows: 3, maxlength: 2000 }),
      now: () => byId('community-description')?.textContent ?? '',
      asTyped: true,
      show: showDescription,
      done: (value) => (value ? 'Description saved.' : 'Description cleared.'),
    },
    {
      method: 'changerelayicon',
      what: 'icon',
      id: 'desk-profile-icon',
      label: 'Icon: an https:// image URL',
      control: h('input', { type: 'url', inputmode: 'url', spellcheck: 'false' }),
      now: () => byId('community-icon')?.getAttribute('src') ?? '',
      show: showIcon,
      done: (value) => {
        if (!value) return 'Icon cleared.'
        return originOf(value) === servedIconOrigin
          ? 'Icon saved.'
          : 'Icon saved: it shows when the page is loaded again.'
      },
    },
    {
      method: 'setjoinpolicy',
      what: 'join policy',
      id: 'desk-profile-policy',
      label: 'Who may join',
      control: h('select', {}, ...POLICIES.map(([value, text]) => h('option', { value, text }))),
      // Drawn by the server on #join; without it the select starts at the first choice.
      now: () => byId('join')?.dataset.joinPolicy ?? 'invite',
      show: (policy) => {
        const join = byId('join')
        if (join) join.dataset.joinPolicy = policy
      },
      done: (value) => `Join policy saved: ${POLICIES.find(([p]) => p === value)?.[1] ?? value}.`,
    },
  ].filter((f) => desk.may(f.method))
  if (!fields.length) return null

  const { section, status } = panel('desk-profile', 'Profile and join policy')
  for (const f of fields) {
    f.control.id = f.id
    f.control.value = f.now()
    const save = button(`${f.id}-save`, `Save ${f.what}`)
    section.append(h('div', { class: 'desk-row' }, field(f.label, f.control), save))
    onAction(save, status, async () => {
      // A name a person reads goes as typed: the relay refuses one that is blank or holds
      // what would show otherwise (SPEC section 10); it is never trimmed here either.
      const value = f.asTyped ? f.control.value : f.control.value.trim()
      await desk.call(f.method, [value])
      f.show(value)
      return f.done(value)
    })
  }
  section.append(status)
  return { section, draw() {}, title: 'Profile' }
}
