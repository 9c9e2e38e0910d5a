import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MarkerFilter, stripMarkers } from '../../../src/services/avatar/modules/chat/markers.ts'

/** Feeds `pieces` one by one and returns what came out, piece by piece, plus the result. */
function run(pieces: string[]) {
  const filter = new MarkerFilter()
  const out = pieces.map((piece) => filter.push(piece))
  out.push(filter.end())
  return { text: out.join(''), out, ...filter.result }
}

describe('marker protocol', () => {
  it('removes leading markers and reads them', () => {
    assert.deepEqual(stripMarkers('[emotion:happy][action:wave] Hello there!'), { text: 'Hello there!', emotion: 'happy', action: 'wave', sawMarker: true })
  })

  it('removes markers split across pieces, character by character', () => {
    const source = '[emotion:surprised][action:shakeHead] Really? No way.'
    const result = run([...source])
    assert.equal(result.text, 'Really? No way.')
    assert.equal(result.emotion, 'surprised')
    assert.equal(result.action, 'shakeHead')
    assert.ok(result.out.every((piece) => !piece.includes('[') && !piece.includes(']')))
  })

  it('accepts a combined marker, case and spacing variations, and a marker at the end', () => {
    assert.deepEqual(stripMarkers('Hi! [Emotion: Happy, action: shake_head]'), { text: 'Hi!', emotion: 'happy', action: 'shakeHead', sawMarker: true })
    assert.deepEqual(stripMarkers('Sure.\n[ action = nod ]'), { text: 'Sure.', action: 'nod', sawMarker: true })
  })

  it('collapses the space around a marker in the middle', () => {
    assert.equal(stripMarkers('Hello [emotion:happy] there').text, 'Hello there')
  })

  it('drops invalid values but still removes the marker', () => {
    assert.deepEqual(stripMarkers('[emotion:ecstatic][action:moonwalk] Yay'), { text: 'Yay', sawMarker: true })
  })

  it('keeps ordinary brackets', () => {
    assert.equal(stripMarkers('See [1] and [note: emotions] and [[emotion:sad] ok').text, 'See [1] and [note: emotions] and [ ok')
    assert.equal(run(['a [', 'b] c [']).text, 'a [b] c [')
    assert.equal(stripMarkers('[emotionless] face').text, '[emotionless] face')
  })

  it('drops an unclosed marker at the end of the reply', () => {
    assert.deepEqual(stripMarkers('Fine. [emotion:hap'), { text: 'Fine.', sawMarker: true })
    assert.deepEqual(stripMarkers('Fine. [emotion:sad, action:no'), { text: 'Fine.', emotion: 'sad', sawMarker: true })
  })

  it('reports no marker when there is none', () => {
    assert.deepEqual(stripMarkers('  plain text  '), { text: 'plain text', sawMarker: false })
  })
})
