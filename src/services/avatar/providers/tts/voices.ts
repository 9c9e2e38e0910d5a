/** One voice of the public catalogue (the four documented in the spec). */
interface Voice {
  id: string
  name: string
  locale: 'zh-CN' | 'en-US'
  gender: 'Female' | 'Male'
}

/** A voice plus the local espeak-ng voice that speaks it. */
export interface CatalogueVoice extends Voice {
  /** espeak-ng language + variant (`cmn` is Mandarin; `+f3`/`+m3` pick distinct timbres). */
  espeak: string
}

export const VOICES: readonly CatalogueVoice[] = [
  { id: 'zh-CN-XiaoxiaoNeural', name: 'Xiaoxiao', locale: 'zh-CN', gender: 'Female', espeak: 'cmn+f3' },
  { id: 'zh-CN-YunxiNeural', name: 'Yunxi', locale: 'zh-CN', gender: 'Male', espeak: 'cmn+m3' },
  { id: 'en-US-JennyNeural', name: 'Jenny', locale: 'en-US', gender: 'Female', espeak: 'en-us+f3' },
  { id: 'en-US-GuyNeural', name: 'Guy', locale: 'en-US', gender: 'Male', espeak: 'en-us+m3' },
]

export function findVoice(id: string): CatalogueVoice | undefined {
  return VOICES.find((voice) => voice.id === id)
}

// Han ideographs (and CJK punctuation): text with any of them is read by a Mandarin voice.
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f]/u

/** The voice used when a request names none: Mandarin for Chinese text, English otherwise. */
export function defaultVoiceFor(text: string): CatalogueVoice {
  const id = HAN.test(text) ? 'zh-CN-XiaoxiaoNeural' : 'en-US-JennyNeural'
  return findVoice(id) ?? VOICES[0]
}
