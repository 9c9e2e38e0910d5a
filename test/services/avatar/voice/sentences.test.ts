import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SentenceSplitter } from '../../../../src/services/avatar/modules/voice/sentences.ts'

function split(pieces: string[]): string[][] {
  const splitter = new SentenceSplitter()
  return [...pieces.map((piece) => splitter.push(piece)), splitter.end()]
}

describe('SentenceSplitter', () => {
  it('gives each sentence once its end is certain, the rest at the end of the stream', () => {
    assert.deepEqual(split(['Hello', ' there.', ' How', ' are you?', ' Fine']), [[], [], ['Hello there.'], [], ['How are you?'], ['Fine']])
  })

  it('does not cut numbers or a mark that the next piece may continue', () => {
    assert.deepEqual(split(['It costs 3.', '50 dollars!', '"', ' Yes.']), [[], [], [], ['It costs 3.50 dollars!"'], ['Yes.']])
  })

  it('cuts Chinese at its end marks at once, and at line breaks', () => {
    assert.deepEqual(split(['你好！我是小雅。', '有什么', '可以帮你\n', '好']), [['你好！', '我是小雅。'], [], ['有什么可以帮你'], [], ['好']])
  })
})
