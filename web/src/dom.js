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

// A button that copies `text()` to the clipboard, and says in its own label that it did
// (or, where the browser refuses, that the text is there to select).
export function copyButton(id, text, label = 'Copy') {
  const button = h('button', { id, type: 'button', class: 'copy' }, label)
  let restore
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text())
      button.textContent = 'Copied'
    } catch {
      button.textContent = 'Select it to copy'
    }
    clearTimeout(restore)
    restore = setTimeout(() => {
      button.textContent = label
    }, 3000)
  })
  return button
}
