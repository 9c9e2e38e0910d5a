import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { TSchema } from '@sinclair/typebox'
import { renderEnvExample } from '../../scripts/env-example.ts'
import { configSchemas } from '../../src/config.ts'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const variables = configSchemas.flatMap((schema) => Object.keys(schema.properties as Record<string, TSchema>))

describe('documentation stays in step with the code', () => {
  it('README starts with what Triad is and the two commands', () => {
    const readme = read('README.md')
    const head = readme.slice(0, 1200)
    assert.match(head, /npm ci && npm start/)
    assert.match(head, /npm test/)
  })

  it('README documents every environment variable the code reads', () => {
    const readme = read('README.md')
    const missing = variables.filter((name) => !readme.includes(`\`${name}\``))
    assert.deepEqual(missing, [])
  })

  it('.env.example is what `npm run env:example` generates', () => {
    assert.equal(read('.env.example'), renderEnvExample())
  })
})
