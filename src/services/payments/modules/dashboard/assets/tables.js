// Table cells and the elements inside them, always inserted as text (never as HTML).
import { $ } from './page.js'

export function cell(content, options) {
  const td = document.createElement('td')
  if (content instanceof Node) td.appendChild(content)
  else td.textContent = content === undefined || content === null || content === '' ? '–' : String(content)
  if (options && options.num) td.className = 'num'
  return td
}

export function badge(kind, text) {
  const span = document.createElement('span')
  span.className = 'status ' + kind
  span.textContent = text
  return span
}

export function linkButton(text, label, onClick) {
  const button = document.createElement('button')
  button.type = 'button'
  button.className = 'link'
  button.textContent = text
  if (label) button.setAttribute('aria-label', label)
  button.addEventListener('click', onClick)
  return button
}

/** Fills a table's body; every cell carries its column name for the stacked phone layout. */
export function fillTable(id, rows, emptyText) {
  const table = $(id)
  const body = table.tBodies[0]
  const headings = Array.from(table.tHead.rows[0].cells, function (th) {
    return th.textContent
  })
  table.classList.add('stack')
  body.textContent = ''
  if (rows.length === 0) {
    const tr = document.createElement('tr')
    const td = cell(emptyText)
    td.colSpan = headings.length
    tr.appendChild(td)
    body.appendChild(tr)
    return
  }
  rows.forEach(function (cells) {
    const tr = document.createElement('tr')
    cells.forEach(function (td, index) {
      td.setAttribute('data-label', headings[index] || '')
      tr.appendChild(td)
    })
    body.appendChild(tr)
  })
}

export function codeText(text) {
  const code = document.createElement('code')
  code.textContent = text
  return code
}
