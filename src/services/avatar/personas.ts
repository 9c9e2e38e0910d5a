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
  /** Other ids clients know the character by (the meta-human front end's presets, for one). */
  aliases: readonly string[]
}

export interface PersonaCatalog {
  defaultId: string
  byId: ReadonlyMap<string, Persona>
  /** Alias → the id of the character it names. */
  aliases: ReadonlyMap<string, string>
}

export const BUILT_IN_PERSONAS: readonly Persona[] = [
  {
    id: 'assistant',
    aliases: ['lively-assistant'],
    name: { en: 'Aria', zh: '小雅' },
    prompt:
      'You are Aria, a lively and warm virtual assistant shown as an animated avatar. You are upbeat, curious and encouraging, ' +
      'you keep answers short (one to three sentences, as they are spoken aloud) and you like a light touch of humour.',
  },
  {
    id: 'advisor',
    aliases: ['serious-advisor'],
    name: { en: 'Dr. Morgan', zh: '莫根博士' },
    prompt:
      'You are Dr. Morgan, a serious and thoughtful advisor shown as an animated avatar. You speak calmly and precisely, weigh ' +
      'options before recommending one, say plainly when you are unsure, and avoid jokes. Keep answers to a few sentences.',
  },
  {
    id: 'companion',
    aliases: ['cute-companion'],
    name: { en: 'Mimi', zh: '咪咪' },
    prompt:
      'You are Mimi, a cute and affectionate companion shown as an animated avatar. You are playful, gentle and caring, you ' +
      'cheer the user up, and you speak in short, sweet sentences.',
  },
  {
    id: 'service',
    aliases: ['pro-service'],
    name: { en: 'Alex', zh: '小安' },
    prompt:
      'You are Alex, a professional customer-service agent shown as an animated avatar. You are polite, efficient and ' +
      'solution-oriented: acknowledge the request, answer it or say what the next step is, and keep a courteous, neutral tone.',
  },
]

const CharacterIdSchema = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' })

const PersonaFileSchema = Type.Object({
  default: Type.Optional(Type.String({ minLength: 1 })),
  characters: Type.Array(
    Type.Object({
      id: CharacterIdSchema,
      aliases: Type.Optional(Type.Array(CharacterIdSchema, { maxItems: 32 })),
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
      // A character that replaces a built-in one keeps its aliases unless it lists its own.
      const aliases = character.aliases ?? byId.get(character.id)?.aliases ?? []
      byId.set(character.id, { id: character.id, name, prompt: character.prompt, aliases })
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
  return { defaultId, byId, aliases: aliasIndex(byId) }
}

/**
 * Alias → character id. An id always wins over another character's alias (an operator's
 * `lively-assistant` character replaces the built-in alias); one alias on two characters is
 * ambiguous and stops the server at start.
 */
function aliasIndex(byId: ReadonlyMap<string, Persona>): Map<string, string> {
  const index = new Map<string, string>()
  for (const persona of byId.values()) {
    for (const alias of persona.aliases) {
      if (byId.has(alias)) continue
      const taken = index.get(alias)
      if (taken !== undefined && taken !== persona.id) {
        throw new Error(`AVATAR_CHARACTERS_FILE gives the alias ${alias} to two characters: ${taken} and ${persona.id}`)
      }
      index.set(alias, persona.id)
    }
  }
  return index
}

/** The character that plays, and the id the client asked for when no character answers to it. */
export interface PersonaChoice {
  persona: Persona
  unknownId?: string
}

/**
 * The character `id` names (by id, then by alias), or the default one. An unknown id is not an
 * error, as clients ship ids we may not have, but the caller must make it visible
 * (`unknownId`): a silently swapped character is hard to notice.
 */
export function resolvePersona(catalog: PersonaCatalog, id: string | undefined): PersonaChoice {
  const found = id === undefined ? undefined : catalog.byId.get(catalog.aliases.get(id) ?? id)
  if (found) return { persona: found }
  const fallback = catalog.byId.get(catalog.defaultId)
  if (!fallback) throw new Error(`default character ${catalog.defaultId} is missing`)
  return id === undefined ? { persona: fallback } : { persona: fallback, unknownId: id }
}
