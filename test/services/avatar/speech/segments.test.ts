import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { splitIntoSegments } from '../../../../src/services/avatar/providers/tts/segments.ts'

describe('splitIntoSegments', () => {
  it('keeps every segment within its bound and loses no text', () => {
    const english = 'One sentence here. Another one, with a clause; and more words follow it! '.repeat(80)
    const chinese = '你好，很高兴见到你。今天天气不错，我们一起去公园散步吧！'.repeat(80)
    const unbroken = '很'.repeat(1000)
    for (const text of [english, chinese, unbroken]) {
      const segments = splitIntoSegments(text, 240, 120)
      assert.ok(segments[0].length <= 120)
      for (const segment of segments) assert.ok(segment.length > 0 && segment.length <= 240, `${segment.length}`)
      assert.equal(segments.join('').replace(/\s/g, ''), text.replace(/\s/g, ''))
    }
  })

  it('cuts after a sentence end when there is one', () => {
    const segments = splitIntoSegments(`${'a'.repeat(80)}. ${'b'.repeat(80)}`, 240, 120)
    assert.deepEqual(segments, [`${'a'.repeat(80)}.`, 'b'.repeat(80)])
  })

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(200)
    for (const segment of splitIntoSegments(text, 101, 101)) assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(segment))
  })
})
