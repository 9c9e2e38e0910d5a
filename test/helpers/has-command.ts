import { spawnSync } from 'node:child_process'

/** Whether `name` is a command on PATH (tests that drive a Debian package skip without it, outside CI). */
export const hasCommand = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0
