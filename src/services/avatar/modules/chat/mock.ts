import type { Action, ChatReply, Emotion } from './chat.constants.ts'
import type { Persona } from '../../personas.ts'

/**
 * The local reply engine used without a model key, and whenever the model fails. It is
 * deterministic (the same text gives the same reply), answers in the language of the input,
 * and reads the mood of the text to pick the avatar's emotion and gesture.
 */

export type Language = 'en' | 'zh'

type Intent = 'sad' | 'angry' | 'thanks' | 'farewell' | 'greeting' | 'dance' | 'surprise' | 'joke' | 'help' | 'question' | 'agree' | 'disagree' | 'other'

interface IntentRule {
  intent: Intent
  /** English words or phrases, matched as whole words, case-insensitively. */
  en: string[]
  /** Chinese substrings (Chinese has no spaces between words). */
  zh: string[]
}

// Ordered by precedence: feelings outrank politeness, which outranks the shape of a sentence
// ("hi, my cat died" is bad news, not a greeting).
const RULES: IntentRule[] = [
  {
    intent: 'sad',
    en: [
      'sad',
      'unhappy',
      'depressed',
      'lonely',
      'crying',
      'cry',
      'died',
      'passed away',
      'lost my',
      'bad news',
      'heartbroken',
      'miserable',
      'failed',
      'sick',
      'tired',
      'upset',
    ],
    zh: ['难过', '伤心', '不开心', '沮丧', '孤独', '哭', '去世', '失败', '生病', '累了', '糟糕'],
  },
  {
    intent: 'angry',
    en: ['angry', 'furious', 'mad at', 'hate', 'annoying', 'annoyed', 'unfair', 'outrageous', 'scam', 'ripped off'],
    zh: ['生气', '愤怒', '讨厌', '烦死', '气死', '不公平', '骗子'],
  },
  { intent: 'thanks', en: ['thanks', 'thank', 'thx', 'appreciate', 'grateful', 'cheers'], zh: ['谢谢', '感谢', '多谢', '谢啦'] },
  { intent: 'farewell', en: ['bye', 'goodbye', 'see you', 'good night', 'farewell', 'see ya'], zh: ['再见', '拜拜', '晚安', '回头见'] },
  {
    intent: 'greeting',
    en: ['hello', 'hi', 'hey', 'greetings', 'good morning', 'good afternoon', 'good evening', 'howdy', 'hiya'],
    zh: ['你好', '您好', '嗨', '哈喽', '早上好', '下午好', '晚上好', '早安'],
  },
  { intent: 'dance', en: ['dance', 'dancing', 'sing', 'song', 'music', 'party'], zh: ['跳舞', '唱歌', '音乐', '跳个舞', '派对'] },
  {
    intent: 'surprise',
    en: ['wow', 'amazing', 'incredible', 'unbelievable', 'no way', 'guess what', 'awesome'],
    zh: ['哇', '天哪', '真的假的', '不可思议', '太神奇', '厉害'],
  },
  { intent: 'joke', en: ['joke', 'funny', 'laugh'], zh: ['笑话', '搞笑', '好笑'] },
  { intent: 'help', en: ['help', 'assist', 'support'], zh: ['帮忙', '帮助', '帮我', '求助'] },
  {
    intent: 'question',
    // English questions are recognised by their shape (see QUESTION_START), not by words anywhere.
    en: [],
    zh: ['吗', '什么', '为什么', '怎么', '如何', '哪', '谁', '几', '多少', '是不是'],
  },
  {
    intent: 'agree',
    en: ['yes', 'yeah', 'yep', 'sure', 'ok', 'okay', 'great', 'cool', 'nice', 'good'],
    zh: ['好的', '是的', '对的', '没错', '可以', '没问题', '太好了'],
  },
  { intent: 'disagree', en: ['no', 'nope', 'not really', 'never'], zh: ['不是', '不要', '不行', '不对'] },
]

const MOOD: Record<Intent, { emotion: Emotion; actions: Action[] }> = {
  sad: { emotion: 'sad', actions: ['nod'] },
  angry: { emotion: 'angry', actions: ['shakeHead'] },
  thanks: { emotion: 'happy', actions: ['nod'] },
  farewell: { emotion: 'happy', actions: ['wave'] },
  greeting: { emotion: 'happy', actions: ['greet', 'wave'] },
  dance: { emotion: 'happy', actions: ['dance'] },
  surprise: { emotion: 'surprised', actions: ['speak'] },
  joke: { emotion: 'happy', actions: ['speak'] },
  help: { emotion: 'neutral', actions: ['nod'] },
  question: { emotion: 'neutral', actions: ['think'] },
  agree: { emotion: 'happy', actions: ['nod'] },
  disagree: { emotion: 'neutral', actions: ['shakeHead'] },
  other: { emotion: 'neutral', actions: ['speak'] },
}

const REPLIES: Record<Language, Record<Intent, string[]>> = {
  en: {
    sad: [
      "I'm so sorry to hear that. That sounds really hard, and it's okay to feel this way. I'm here if you want to talk about it.",
      "That's sad news, and I'm sorry you're going through it. Take your time; I'm listening.",
    ],
    angry: [
      "That sounds really frustrating, and I understand why you're upset. Let's see what we can do about it.",
      "I can hear how annoyed you are, and that's fair. Tell me more and we'll sort it out together.",
    ],
    thanks: ["You're very welcome! I'm glad I could help.", 'Happy to help! Let me know if there is anything else.'],
    farewell: ['Goodbye! It was lovely talking with you. See you soon!', 'Take care, and come back any time!'],
    greeting: ["Hello! I'm {name}. It's nice to meet you. How can I help you today?", "Hi there! I'm {name}. What would you like to talk about?"],
    dance: ["Ooh, I love music! Let's dance together!", 'Music on! Watch my moves!'],
    surprise: ["Wow, really? That's amazing! Tell me more!", "No way! That's incredible!"],
    joke: ["Why don't scientists trust atoms? Because they make up everything!", 'I told my computer a joke once. It needed a while to process it.'],
    help: ["Of course, I'm happy to help. Tell me a little more about what you need.", "Sure! Let me know what you're working on and we'll go step by step."],
    question: [
      "That's a good question. Let me think about it... I'm answering offline right now, so I can't look things up, but I'm happy to reason it through with you.",
      "Hmm, interesting question! I'm in offline mode at the moment, so my answer is limited, but let's think about it together.",
    ],
    agree: ['Great! Glad we agree.', 'Sounds good to me!'],
    disagree: ["Okay, no problem. Let's try something else.", "I see. That's fine, tell me what you'd prefer."],
    other: ['I see. Tell me more about that.', "Interesting! I'm listening, please go on.", 'Got it. What would you like to do next?'],
  },
  zh: {
    sad: ['听到这个消息我很难过。这种感受是正常的，我会一直在这里陪着你。', '真的很抱歉你正在经历这些。慢慢来，我在听。'],
    angry: ['这听起来确实让人很生气，我理解你的感受。我们一起看看能做些什么。', '我能感觉到你很不满，这很正常。跟我说说具体情况吧。'],
    thanks: ['不客气！很高兴能帮到你。', '不用谢！还有什么需要随时告诉我。'],
    farewell: ['再见！和你聊天很开心，期待下次见面！', '保重，随时回来找我聊天哦！'],
    greeting: ['你好！我是{name}，很高兴认识你。今天有什么可以帮你的吗？', '嗨！我是{name}。你想聊些什么呢？'],
    dance: ['我最喜欢音乐了！我们一起跳舞吧！', '音乐响起来！看我的舞步！'],
    surprise: ['哇，真的吗？太厉害了！快跟我说说！', '不会吧！这也太神奇了！'],
    joke: ['为什么程序员总是分不清万圣节和圣诞节？因为 Oct 31 等于 Dec 25！', '我给电脑讲了个笑话，它想了好久才反应过来。'],
    help: ['当然，我很乐意帮忙。能具体说说你需要什么吗？', '没问题！告诉我你遇到了什么，我们一步一步来。'],
    question: [
      '这是个好问题，让我想一想……我现在处于离线模式，没法查资料，但我们可以一起分析一下。',
      '嗯，有意思的问题！我现在是离线模式，回答有限，不过我们可以一起想想。',
    ],
    agree: ['太好了！我们想法一致。', '好的，没问题！'],
    disagree: ['好的，没关系，我们换个方式试试。', '明白了，那你更想怎么做呢？'],
    other: ['我明白了，能再多说一点吗？', '有意思！我在听，请继续。', '好的，接下来你想做什么呢？'],
  },
}

const HAN = /\p{Script=Han}/u

/** Chinese when the text has any Han character and more of them than Latin letters. */
export function detectLanguage(text: string): Language {
  const han = text.match(/\p{Script=Han}/gu)?.length ?? 0
  if (han === 0) return 'en'
  const latin = text.match(/[A-Za-z]/g)?.length ?? 0
  return han * 2 >= latin ? 'zh' : 'en'
}

// A sentence that opens with a question word or an inverted auxiliary ("is it…", "can you…").
const QUESTION_START =
  /^\s*(?:what|why|how|when|where|who|whom|whose|which|can|could|would|will|should|shall|do|does|did|is|are|was|were|have|has|may|might)(?![\p{L}\p{N}])/iu

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

// One regular expression per rule: whole words only, so "this" is no greeting and "ship" no "hi".
const EN_MATCHERS = new Map<Intent, RegExp>(
  RULES.map((rule) => [rule.intent, new RegExp(`(?<![\\p{L}\\p{N}'])(?:${rule.en.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`, 'iu')]),
)

function matchesIntent(rule: IntentRule, text: string): boolean {
  if (rule.intent === 'question' && (/[?？]\s*$/.test(text) || QUESTION_START.test(text))) return true
  if (rule.en.length > 0 && EN_MATCHERS.get(rule.intent)?.test(text)) return true
  return HAN.test(text) && rule.zh.some((word) => text.includes(word))
}

/** What a text is about, by the first rule (in precedence order) it matches. */
export function detectIntent(text: string): Intent {
  for (const rule of RULES) {
    if (matchesIntent(rule, text)) return rule.intent
  }
  return 'other'
}

/** FNV-1a: a stable, fast hash, so variant choice depends on the text alone. */
function hash(text: string): number {
  let value = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i)
    value = Math.imul(value, 0x01000193)
  }
  return value >>> 0
}

const pick = <T>(items: readonly T[], seed: number): T => items[seed % items.length]

/** Emotion and action for a text (the user's, or a model's reply that carried no usable marker). */
export function classify(text: string): { emotion: Emotion; action: Action } {
  const mood = MOOD[detectIntent(text)]
  return { emotion: mood.emotion, action: pick(mood.actions, hash(text.trim().toLowerCase())) }
}

/** The mock's whole reply to `userText`. */
export function mockReply(userText: string, persona: Persona): ChatReply {
  const normalized = userText.trim().toLowerCase()
  const seed = hash(normalized)
  const language = detectLanguage(userText)
  const intent = detectIntent(userText)
  const mood = MOOD[intent]
  const replyText = pick(REPLIES[language][intent], seed).replace('{name}', persona.name[language])
  return { replyText, emotion: mood.emotion, action: pick(mood.actions, seed >>> 8) }
}

// A Han character (with any punctuation right after it) is a token; otherwise a run of spaces
// plus the word that follows. Every alternative matches at least one character, so exec moves on.
const TOKEN = /\p{Script=Han}[\p{P}\s]*|\s*[^\s\p{Script=Han}]+|\s+/gu

/**
 * Cuts a reply into the pieces a model would stream: words with their leading space for
 * English, single characters for Chinese. The pieces join back to exactly `text`.
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = []
  // One pattern for every reply, walked with exec: matchAll would copy it on each call, and a
  // reply is cut on every streamed turn. Its lastIndex is reset first, so a previous call that
  // threw half-way cannot shift this one.
  TOKEN.lastIndex = 0
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) tokens.push(match[0])
  return tokens
}
