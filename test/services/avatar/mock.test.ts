import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ACTIONS, EMOTIONS } from '../../../src/services/avatar/modules/chat/chat.constants.ts'
import { classify, detectIntent, detectLanguage, mockReply, tokenize } from '../../../src/services/avatar/modules/chat/mock.ts'
import { BUILT_IN_PERSONAS } from '../../../src/services/avatar/personas.ts'

const persona = BUILT_IN_PERSONAS[0]

describe('mock replies', () => {
  it('gives the same reply to the same text', () => {
    for (const text of ['Hello!', 'what is the time?', '我今天很难过', 'random words here']) {
      assert.deepEqual(mockReply(text, persona), mockReply(text, persona))
    }
  })

  it('matches English keywords as whole words only', () => {
    assert.equal(detectIntent('hi'), 'greeting')
    assert.equal(detectIntent('Hi, nice day'), 'greeting')
    assert.notEqual(detectIntent('this is it'), 'greeting')
    assert.notEqual(detectIntent('shipping things'), 'greeting')
    assert.notEqual(detectIntent('The thanksgiving turkey'), 'thanks')
    assert.equal(detectIntent('thank you so much'), 'thanks')
    assert.notEqual(detectIntent('sadly the byelaw changed'), 'farewell')
  })

  it('answers in the language of the input', () => {
    assert.equal(detectLanguage('Hello there'), 'en')
    assert.equal(detectLanguage('你好，今天天气怎么样'), 'zh')
    assert.equal(detectLanguage('我喜欢 Python 编程'), 'zh')
    assert.match(mockReply('你好', persona).replyText, /\p{Script=Han}/u)
    assert.doesNotMatch(mockReply('Hello', persona).replyText, /\p{Script=Han}/u)
    assert.match(mockReply('谢谢你', persona).replyText, /不客气|不用谢/)
  })

  it('picks emotion and action from the content', () => {
    const greeting = mockReply('Hello there', persona)
    assert.equal(greeting.emotion, 'happy')
    assert.ok(['greet', 'wave'].includes(greeting.action))
    assert.match(greeting.replyText, /Aria/)
    assert.equal(mockReply('Why is the sky blue?', persona).action, 'think')
    assert.equal(mockReply('是什么让天空变蓝', persona).action, 'think')
    assert.deepEqual({ ...mockReply('Thanks a lot', persona), replyText: '' }, { replyText: '', emotion: 'happy', action: 'nod' })
    assert.equal(mockReply('I have bad news, my dog died', persona).emotion, 'sad')
    assert.equal(mockReply('我今天很难过', persona).emotion, 'sad')
    assert.equal(mockReply('This is so unfair, I hate it', persona).emotion, 'angry')
    assert.equal(mockReply('Wow, guess what happened', persona).emotion, 'surprised')
    assert.equal(mockReply("Let's dance", persona).action, 'dance')
    assert.equal(mockReply('Goodbye', persona).action, 'wave')
    assert.deepEqual(classify('The report is attached.'), { emotion: 'neutral', action: 'speak' })
  })

  it('only ever returns the documented emotions and actions', () => {
    for (const text of ['hi', '?', '', '🙂', 'no', 'yes', '笑话', 'help me', 'ok', '再见']) {
      const reply = mockReply(text, persona)
      assert.ok((EMOTIONS as readonly string[]).includes(reply.emotion))
      assert.ok((ACTIONS as readonly string[]).includes(reply.action))
      assert.ok(reply.replyText.length > 0)
    }
  })

  it('streams English word by word and Chinese character by character, joining back exactly', () => {
    assert.deepEqual(tokenize("Hello! I'm Aria."), ['Hello!', " I'm", ' Aria.'])
    assert.deepEqual(tokenize('你好！我是'), ['你', '好！', '我', '是'])
    for (const text of ['  spaced  out  ', '混合 mixed 文本, ok?', 'a\nb', '']) assert.equal(tokenize(text).join(''), text)
  })
})
