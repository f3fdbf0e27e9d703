// Roles (SPEC section 6): define one or change its definition (createrole / editrole: id,
// label, description, a color as a hue 0-360 shown as a swatch, order), delete it
// (deleterole), and the defined roles (listroles). The base roles can be relabelled, not
// deleted.
import { h } from '../dom.js'
import { BASE_ROLES, button, failure, field, keyInput, onAction, panel, say } from './ui.js'

// An optional whole number typed in `input`: null when empty.
function optionalNumber(input, what) {
  if (input.value.trim() === '') return null
  const value = Number(input.value)
  if (!Number.isInteger(value)) throw new Error(`${what} must be a whole number, or left empty`)
  return value
}

function swatch(hue, id) {
  const node = h('span', { class: 'swatch', 'aria-hidden': 'true', id })
  paint(node, hue)
  return node
}

function paint(node, hue) {
  node.classList.toggle('none', hue === null)
  if (hue !== null) node.style.setProperty('--role-hue', String(hue))
}

export function rolesPanel(desk) {
  if (!['createrole', 'editrole', 'deleterole', 'listroles'].some((m) => desk.may(m))) return null
  const { section, status } = panel('desk-roles', 'Roles')
  const list = h('ul', { id: 'desk-role-list', class: 'desk-list' })
  const defined = (id) => (desk.data.roles ?? []).some((r) => r.id === id)

  const id = keyInput('desk-role-id', { maxlength: 64 })
  const label = h('input', { id: 'desk-role-label', type: 'text', maxlength: 64 })
  const description = h('textarea', { id: 'desk-role-description', rows: 2, maxlength: 500 })
  const hue = h('input', { id: 'desk-role-hue', type: 'number', min: 0, max: 360, step: 1 })
  const order = h('input', { id: 'desk-role-order', type: 'number', step: 1 })
  const shown = swatch(null, 'desk-role-swatch')
  const save = button('desk-role-save', 'Define role')
  const clear = button('desk-role-new', 'Clear the form')
  if (desk.may('createrole') || desk.may('editrole')) {
    section.append(
      h(
        'div',
        { class: 'desk-row fields' },
        field('Role id', id, 'a-z, 0-9, _ and -; it never changes'),
        field('Label', label),
      ),
      field('Description (optional)', description),
      h(
        'div',
        { class: 'desk-row' },
        h('div', { class: 'desk-row hue' }, field('Color: hue 0 to 360 (optional)', hue), shown),
        field('Order (optional)', order),
      ),
      h('div', { class: 'desk-row' }, save, clear),
    )
  }
  section.append(status)
  if (desk.may('listroles')) section.append(h('h4', { text: 'Defined roles' }), list)

  // The button says what it will do: define a new role, or change the one with this id.
  const named = () => {
    save.textContent = defined(id.value.trim()) ? 'Save changes' : 'Define role'
  }
  id.addEventListener('input', named)
  hue.addEventListener('input', () => {
    const value = Number(hue.value)
    paint(shown, hue.value.trim() !== '' && Number.isInteger(value) ? value : null)
  })
  clear.addEventListener('click', () => {
    for (const input of [id, label, description, hue, order]) input.value = ''
    paint(shown, null)
    named()
    id.focus()
  })

  onAction(save, status, async () => {
    const role = id.value.trim()
    const definition = [
      role,
      label.value, // as typed: the relay refuses a blank one, and trims nothing (SPEC section 10)
      description.value === '' ? null : description.value,
      optionalNumber(hue, 'The hue'),
      optionalNumber(order, 'The order'),
    ]
    const method = defined(role) ? 'editrole' : 'createrole'
    await desk.call(method, definition)
    await desk.refresh(['roles'])
    named()
    return method === 'editrole' ? `Role ${role} changed.` : `Role ${role} defined.`
  })

  function edit(role) {
    id.value = role.id
    label.value = role.label ?? ''
    description.value = role.description ?? ''
    hue.value = role.color ?? ''
    order.value = role.order ?? ''
    paint(shown, role.color)
    named()
    label.focus()
  }

  function item(role) {
    const entry = h(
      'li',
      { 'data-role': role.id },
      swatch(role.color),
      ' ',
      h('span', { class: 'defined-label', text: role.label ?? role.id }),
      ' ',
      h('code', { class: 'defined-id', text: role.id }),
      role.description
        ? h('span', { class: 'defined-description', text: ` ${role.description}` })
        : null,
    )
    if (desk.may('editrole')) {
      const change = button(null, 'Edit', { class: 'role-edit' })
      change.addEventListener('click', () => edit(role))
      entry.append(' ', change)
    }
    if (desk.may('deleterole') && !BASE_ROLES.includes(role.id)) {
      const remove = button(null, 'Delete', { class: 'role-delete danger' })
      onAction(
        remove,
        status,
        async () => {
          const deleted = await desk.call('deleterole', [role.id])
          await desk.refresh(['roles'])
          return deleted
            ? `Role ${role.id} deleted, and taken from whoever held it.`
            : `There was no role ${role.id}.`
        },
        () => [`Delete the role ${role.label ?? role.id}? Whoever holds it loses it.`, 'Delete'],
      )
      entry.append(' ', remove)
    }
    return entry
  }

  let drawn = null
  function draw(failed) {
    const roles = desk.data.roles
    if (roles && roles !== drawn) {
      list.replaceChildren(...roles.map(item))
      drawn = roles
      named()
    }
    if (failed.roles) say(status, 'error', `Could not list the roles. ${failure(failed.roles)}`)
  }

  return {
    section,
    draw,
    title: 'Roles',
    lists: ['roles'],
    // The defined ones (the base roles are every community's), once listed.
    count: () => desk.data.roles?.filter((r) => !BASE_ROLES.includes(r.id)).length ?? null,
  }
}
