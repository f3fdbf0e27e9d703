// Building the page's elements: text only (textContent and text nodes), never markup, so
// nothing from the network or the person can become HTML.

// An element with its attributes and children. `text` sets textContent; `class`, `id` and the
// rest are attributes (true: present, false/null/undefined: absent); strings among the
// children are text nodes.
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value
    else if (value === true) node.setAttribute(name, '')
    else if (value !== false && value !== null && value !== undefined) {
      node.setAttribute(name, String(value))
    }
  }
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false))
  return node
}
