// The page itself: its configuration (the server's words, locale, today and currency exponents,
// rendered as inert JSON by dashboard.view.ts) and the few helpers every view uses to find,
// show and announce its elements.

export const config = JSON.parse(document.getElementById('dashboard-config').textContent)
export const t = config.messages

export function $(id) {
  return document.getElementById(id)
}

export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, function (whole, name) {
    return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole
  })
}

export function announce(text) {
  // Cleared first, so the same words said twice are announced twice.
  $('live').textContent = ''
  window.setTimeout(function () {
    $('live').textContent = text
  }, 30)
}

export function show(id, visible) {
  $(id).hidden = !visible
}
