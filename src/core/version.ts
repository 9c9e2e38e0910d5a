import { readFileSync } from 'node:fs'

/** Triad's name for itself, from package.json: the version every health answer and the OpenAPI document report. */
export const packageInfo = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; description: string }
