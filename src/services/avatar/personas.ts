import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { readFileSync } from 'node:fs'

/** A character the avatar can play: `meta.characterId` picks one. */
export interface Persona {
  id: string
  /** The name the character introduces itself with (English and Chinese). */
  name: { en: string; zh: string }
  /** The character's part of the system prompt: who it is and how it speaks. */
  prompt: string
}

export interface PersonaCatalog {
  defaultId: string
  byId: ReadonlyMap<string, Persona>
}

export const BUILT_IN_PERSONAS: readonly Persona[] = [
  {
    id: 'assistant',
    name: { en: 'Aria', zh: '小雅' },
    prompt:
      'You are Aria, a lively and warm virtual assistant shown as an animated avatar. You are upbeat, curious and encouraging, ' +
      'you keep answers short (one to three sentences, as they are spoken aloud) and you like a light touch of humour.',
  },
  {
    id: 'advisor',
    name: { en: 'Dr. Morgan', zh: '莫根博士' },
    prompt:
      'You are Dr. Morgan, a serious and thoughtful advisor shown as an animated avatar. You speak calmly and precisely, weigh ' +
      'options before recommending one, say plainly when you are unsure, and avoid jokes. Keep answers to a few sentences.',
  },
  {
    id: 'companion',
    name: { en: 'Mimi', zh: '咪咪' },
    prompt:
      'You are Mimi, a cute and affectionate companion shown as an animated avatar. You are playful, gentle and caring, you ' +
      'cheer the user up, and you speak in short, sweet sentences.',
  },
  {
    id: 'service',
    name: { en: 'Alex', zh: '小安' },
    prompt:
      'You are Alex, a professional customer-service agent shown as an animated avatar. You are polite, efficient and ' +
      'solution-oriented: acknowledge the request, answer it or say what the next step is, and keep a courteous, neutral tone.',
  },
]

const PersonaFileSchema = Type.Object({
  default: Type.Optional(Type.String({ minLength: 1 })),
  characters: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }),
      name: Type.Union([Type.String({ minLength: 1 }), Type.Object({ en: Type.String({ minLength: 1 }), zh: Type.String({ minLength: 1 }) })]),
      prompt: Type.String({ minLength: 1, maxLength: 8000 }),
    }),
  ),
})

/**
 * The characters on offer: the built-in ones, then those of the operator's JSON file (which
 * may replace a built-in one by reusing its id, and may name the default), then
 * `AVATAR_SYSTEM_PROMPT`, which replaces the prompt of the default character. Throws with a
 * readable message when the file is missing or malformed, so the server refuses to start.
 */
export function loadPersonas(options: { file?: string; systemPrompt?: string }): PersonaCatalog {
  const byId = new Map<string, Persona>(BUILT_IN_PERSONAS.map((persona) => [persona.id, persona]))
  let defaultId = 'assistant'
  if (options.file) {
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(options.file, 'utf8'))
    } catch (error) {
      throw new Error(`AVATAR_CHARACTERS_FILE must be a readable JSON file (${error instanceof Error ? error.message : String(error)})`, {
        cause: error,
      })
    }
    if (!Value.Check(PersonaFileSchema, parsed)) {
      const first = [...Value.Errors(PersonaFileSchema, parsed)][0]
      throw new Error(`AVATAR_CHARACTERS_FILE is not a valid character file: ${first?.path || '/'} ${first?.message ?? ''}`.trim())
    }
    for (const character of parsed.characters) {
      const name = typeof character.name === 'string' ? { en: character.name, zh: character.name } : character.name
      byId.set(character.id, { id: character.id, name, prompt: character.prompt })
    }
    if (parsed.default !== undefined) {
      if (!byId.has(parsed.default)) throw new Error(`AVATAR_CHARACTERS_FILE names an unknown default character: ${parsed.default}`)
      defaultId = parsed.default
    }
  }
  if (options.systemPrompt) {
    const current = byId.get(defaultId)
    if (current) byId.set(defaultId, { ...current, prompt: options.systemPrompt })
  }
  return { defaultId, byId }
}

/** The character `id` names, or the default one (an unknown id is not an error: clients ship ids we may not have). */
export function pickPersona(catalog: PersonaCatalog, id: unknown): Persona {
  const found = typeof id === 'string' ? catalog.byId.get(id) : undefined
  const fallback = catalog.byId.get(catalog.defaultId)
  if (found) return found
  if (!fallback) throw new Error(`default character ${catalog.defaultId} is missing`)
  return fallback
}
