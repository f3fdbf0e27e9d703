// Search and paging over the members on screen, so 10,000 members stay usable: at most
// PAGE_SIZE items are in the document at once.
import { nameOf } from './profiles.js'

export const PAGE_SIZE = 100

// A member matches a query when its npub or hex pubkey starts with it, or when its name (as
// far as the page knows it) or one of its roles (base or defined, id or label) contains it;
// case does not matter.
export function matches(member, query, roleBook) {
  if (!query) return true
  if (member.pubkey.startsWith(query) || member.npub.startsWith(query)) return true
  if (nameOf(member.pubkey)?.toLowerCase().includes(query)) return true
  const roleIds = [member.baseRole, ...member.roles]
  return roleIds.some((id) => {
    const role = roleBook.get(id)
    return id.includes(query) || role.label.toLowerCase().includes(query)
  })
}

export class MemberBrowser {
  constructor() {
    this.members = []
    this.query = ''
    this.page = 0
    this.shown = []
  }

  setMembers(members) {
    this.members = members
  }

  setQuery(text) {
    this.query = text.trim().toLowerCase()
    this.page = 0
  }

  // Filters, clamps the page and returns what to draw: the page's members and where it is.
  view(roleBook) {
    this.shown = this.members.filter((m) => matches(m, this.query, roleBook))
    const pages = Math.max(1, Math.ceil(this.shown.length / PAGE_SIZE))
    this.page = Math.min(Math.max(this.page, 0), pages - 1)
    const start = this.page * PAGE_SIZE
    return {
      members: this.shown.slice(start, start + PAGE_SIZE),
      page: this.page + 1,
      pages,
      matching: this.shown.length,
    }
  }

  move(step) {
    this.page += step
  }
}
