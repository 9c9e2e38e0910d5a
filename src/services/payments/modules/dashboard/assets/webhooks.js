// The merchant's webhook endpoints and its failed deliveries.
import { api, query, report } from './api.js'
import { when } from './format.js'
import { fill, t } from './page.js'
import { state } from './state.js'
import { badge, cell, codeText, fillTable } from './tables.js'

export async function loadWebhooks() {
  try {
    const [endpoints, failed] = await Promise.all([
      api('GET', '/merchants/' + state.merchant.id + '/webhooks?' + query({ limit: 50 })),
      api('GET', '/merchants/' + state.merchant.id + '/events?' + query({ limit: 20, 'filter[deliveryStatus]': 'failed' })),
    ])
    state.endpoints = new Map(
      endpoints.map(function (endpoint) {
        return [endpoint.id, endpoint]
      }),
    )
    fillTable(
      'endpoints-table',
      endpoints.map(function (endpoint) {
        let status = endpoint.status === 'enabled' ? t.enabled : fill(t.disabled, { reason: endpoint.disabledReason || '' })
        if (endpoint.failingSince) status += ' (' + fill(t.failingSince, { date: when(endpoint.failingSince) }) + ')'
        return [cell(codeText(endpoint.url)), cell(endpoint.events.join(', ')), cell(badge(endpoint.status, status)), cell(when(endpoint.created))]
      }),
      fill(t.noEndpoints, { id: state.merchant.id }),
    )
    const rows = []
    failed.forEach(function (event) {
      event.deliveries
        .filter(function (delivery) {
          return delivery.status === 'failed'
        })
        .forEach(function (delivery) {
          rows.push([cell(event.type + ' ' + event.id), cell(when(event.created)), cell(endpointName(delivery.webhookId)), cell(delivery.attempts.length, { num: true }), cell(delivery.lastError)])
        })
    })
    fillTable('failed-table', rows, t.noFailed)
  } catch (error) {
    report(error)
  }
}

export function endpointName(id) {
  const endpoint = state.endpoints.get(id)
  return endpoint ? endpoint.url : id
}
