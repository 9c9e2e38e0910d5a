import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp } from '../helpers/build-app.ts'

interface Operation {
  tags?: string[]
  summary?: string
  responses?: Record<string, { content?: unknown; description?: string }>
}

describe('OpenAPI document', () => {
  it('describes every route with tags, a summary and its responses', async (t) => {
    const { app } = await buildTestApp(t)
    const response = await app.inject('/docs/json')
    assert.equal(response.statusCode, 200)
    const document = response.json() as { paths: Record<string, Record<string, Operation>> }
    const problems: string[] = []
    let operations = 0
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations++
        const name = `${method.toUpperCase()} ${path}`
        if (!operation.tags?.length) problems.push(`${name}: no tags`)
        if (!operation.summary) problems.push(`${name}: no summary`)
        const statuses = Object.keys(operation.responses ?? {})
        // A route answers with a success, switches protocols (101: a WebSocket), or exists only
        // to refuse (405 for a verb the spec rejects).
        if (!statuses.some((status) => /^[23]/.test(status) || status === '101' || status === '405')) problems.push(`${name}: no response declared`)
      }
    }
    assert.ok(operations > 0)
    assert.deepEqual(problems, [])
  })
})
