import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/**
 * Packs a CommonJS package and everything it requires into one classic script for a browser
 * test page, which then finds the package's exports at `window[globalName]`. Enough for small
 * dependency-free libraries (Paylike's @paylike/request); no bundler is installed for this.
 */
export function bundleCommonJs(entry: string, globalName: string, from: string = import.meta.url): string {
  const ids = new Map<string, number>()
  const modules: string[] = []
  const add = (file: string): number => {
    const known = ids.get(file)
    if (known !== undefined) return known
    const id = modules.length
    ids.set(file, id)
    modules.push('')
    const source = readFileSync(file, 'utf8')
    const resolve = createRequire(file)
    const table: Record<string, number> = {}
    for (const [, name] of source.matchAll(/require\(\s*['"]([^'"]+)['"]\s*\)/g)) table[name] = add(resolve.resolve(name))
    modules[id] = `[function (module, exports, require) {\n${source}\n}, ${JSON.stringify(table)}]`
    return id
  }
  const root = add(createRequire(from).resolve(entry))
  return `;(function () {
  var defs = [${modules.join(',\n')}]
  var cache = {}
  function load(id) {
    if (cache[id]) return cache[id].exports
    var module = (cache[id] = { exports: {} })
    defs[id][0].call(module.exports, module, module.exports, function (name) {
      if (!(name in defs[id][1])) throw new Error('not bundled: ' + name)
      return load(defs[id][1][name])
    })
    return module.exports
  }
  window[${JSON.stringify(globalName)}] = load(${root})
})()
`
}
