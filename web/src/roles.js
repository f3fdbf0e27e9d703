// The community's role definitions (kind 33534, SPEC section 6): id, label and color by id.

export function roleFromEvent(event) {
  const tag = (name) => event.tags.find((t) => t[0] === name)?.[1]
  const id = tag('d')
  if (!id) return null
  const hue = Number.parseInt(tag('color') ?? '', 10)
  return {
    id,
    label: tag('label') || id,
    hue: Number.isInteger(hue) && hue >= 0 && hue <= 360 ? hue : null,
    createdAt: event.created_at,
  }
}

// Role definitions by id, each the newest one seen (33534 is addressable).
export class RoleBook {
  constructor() {
    this.byId = new Map()
  }

  add(role) {
    const known = this.byId.get(role.id)
    if (known && known.createdAt >= role.createdAt) return false
    this.byId.set(role.id, role)
    return true
  }

  get(id) {
    return this.byId.get(id) ?? { id, label: id, hue: null }
  }
}
