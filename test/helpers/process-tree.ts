import { readdirSync, readFileSync } from 'node:fs'

/** Every live process's parent, read from /proc (Linux); zombies count as gone. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // The command name, in parentheses, may itself hold spaces and parentheses.
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (state !== 'Z') parentOf.set(Number(entry), Number(parent))
    } catch {
      // The process ended while the list was read.
    }
  }
  return parentOf
}

/** `roots` and every process below them. */
export function processTree(roots: readonly number[]): Set<number> {
  const parentOf = parents()
  const tree = new Set(roots.filter((pid) => parentOf.has(pid)))
  for (let grew = true; grew; ) {
    grew = false
    for (const [pid, parent] of parentOf) {
      if (tree.has(parent) && !tree.has(pid)) {
        tree.add(pid)
        grew = true
      }
    }
  }
  return tree
}

function signal(pids: Iterable<number>, name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name)
    } catch {
      // Already gone.
    }
  }
}

/**
 * `kill -9` of `roots` and everything below them, at once. PostgreSQL's backends put themselves
 * in process groups of their own, so a group kill would miss them: the tree is read from /proc
 * instead, frozen with SIGSTOP first (a postmaster could otherwise fork a backend between the
 * reading and the killing), read again, then killed.
 */
export function killProcessTree(roots: readonly number[]): Set<number> {
  let tree = processTree(roots)
  for (let pass = 0; pass < 3; pass++) {
    signal(tree, 'SIGSTOP')
    const again = processTree([...tree])
    if (again.size === tree.size) break
    tree = again
  }
  signal(tree, 'SIGKILL')
  return tree
}
