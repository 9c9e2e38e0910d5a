// The volume of the chosen period per currency: a table and a bar chart (inline SVG) each.
import { api, query, report } from './api.js'
import { dayText, money } from './format.js'
import { $, config, fill, t } from './page.js'
import { state } from './state.js'
import { cell, fillTable } from './tables.js'

const DAY_MS = 86400000

$('period').addEventListener('change', function () {
  loadVolume()
})

export async function loadVolume() {
  const days = Number($('period').value)
  const to = config.today
  const from = new Date(Date.parse(to + 'T00:00:00Z') - (days - 1) * DAY_MS).toISOString().slice(0, 10)
  let volume
  try {
    volume = (await api('GET', '/merchants/' + state.merchant.id + '/volume?' + query({ from: from, to: to }))).volume
  } catch (error) {
    report(error)
    return
  }
  volume.currencies.forEach(function (entry) {
    state.currencies.set(entry.currency, entry.exponent)
  })
  const list = $('currencies')
  list.textContent = ''
  new Set([state.merchant.currency].concat(Array.from(state.currencies.keys()))).forEach(function (code) {
    const option = document.createElement('option')
    option.value = code
    list.appendChild(option)
  })
  fillTable(
    'volume-table',
    volume.currencies.map(function (entry) {
      return [
        cell(entry.currency),
        cell(money(entry.today.authorized, entry.currency), { num: true }),
        cell(money(entry.authorized, entry.currency), { num: true }),
        cell(money(entry.captured, entry.currency), { num: true }),
        cell(money(entry.refunded, entry.currency), { num: true }),
        cell(entry.count, { num: true }),
      ]
    }),
    t.noVolume,
  )
  const charts = $('volume-charts')
  charts.textContent = ''
  volume.currencies.forEach(function (entry) {
    charts.appendChild(chart(entry, volume))
  })
}

const SVG = 'http://www.w3.org/2000/svg'

function svg(name, attributes, text) {
  const element = document.createElementNS(SVG, name)
  Object.keys(attributes).forEach(function (key) {
    element.setAttribute(key, String(attributes[key]))
  })
  if (text !== undefined) element.textContent = text
  return element
}

/** One currency's authorized amount per day as bars; today's bar in its own colour. Drawn, not loaded. */
function chart(entry, volume) {
  const width = 480
  const height = 180
  const top = 20
  const bottom = 24
  const figure = document.createElement('figure')
  figure.className = 'chart'
  const caption = document.createElement('figcaption')
  const captionId = 'chart-' + entry.currency
  caption.id = captionId
  caption.textContent = entry.currency
  figure.appendChild(caption)
  const label = fill(t.chartLabel, {
    currency: entry.currency,
    from: dayText(volume.from),
    to: dayText(volume.to),
    total: money(entry.authorized, entry.currency),
    today: money(entry.today.authorized, entry.currency),
  })
  const drawing = svg('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': label, focusable: 'false' })
  const max = Math.max.apply(
    null,
    entry.days.map(function (day) {
      return day.authorized
    }).concat([1]),
  )
  const slot = (width - 16) / entry.days.length
  const barWidth = Math.max(1, slot * 0.8)
  drawing.appendChild(svg('line', { x1: 8, x2: width - 8, y1: height - bottom, y2: height - bottom, stroke: '#5b6670', 'stroke-width': 1 }))
  entry.days.forEach(function (day, index) {
    const barHeight = ((height - top - bottom) * day.authorized) / max
    const rect = svg('rect', {
      x: (8 + index * slot + (slot - barWidth) / 2).toFixed(2),
      y: (height - bottom - barHeight).toFixed(2),
      width: barWidth.toFixed(2),
      height: barHeight.toFixed(2),
      fill: day.date === volume.today ? '#8a3b00' : '#0b4f8a',
    })
    rect.appendChild(svg('title', {}, dayText(day.date) + ': ' + money(day.authorized, entry.currency) + ' (' + day.count + ')'))
    drawing.appendChild(rect)
  })
  drawing.appendChild(svg('text', { x: 8, y: 14, fill: '#4a5560', 'font-size': 12 }, money(max === 1 ? 0 : max, entry.currency)))
  drawing.appendChild(svg('text', { x: 8, y: height - 6, fill: '#4a5560', 'font-size': 12 }, dayText(volume.from)))
  drawing.appendChild(svg('text', { x: width - 8, y: height - 6, fill: '#4a5560', 'font-size': 12, 'text-anchor': 'end' }, dayText(volume.to)))
  figure.appendChild(drawing)
  const legend = document.createElement('p')
  legend.className = 'legend'
  legend.textContent = t.periodTotal + ': ' + money(entry.authorized, entry.currency) + ' · ' + t.chartToday + ': ' + money(entry.today.authorized, entry.currency)
  figure.appendChild(legend)
  return figure
}
