// node:test reporter: total duration of top-level tests per file, sorted
export default async function* reporter(source) {
  const files = new Map()
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const f = event.data.file.replace(process.cwd() + '/', '')
      files.set(f, (files.get(f) ?? 0) + (event.data.details?.duration_ms ?? 0))
      if (event.type === 'test:fail') yield `FAIL ${f} ${event.data.name}\n`
    }
  }
  const sorted = [...files].sort((a, b) => b[1] - a[1])
  let total = 0
  for (const [, ms] of sorted) total += ms
  yield `total ${Math.round(total / 1000)} s over ${sorted.length} files\n`
  for (const [f, ms] of sorted.slice(0, 40)) yield `${Math.round(ms / 1000)} s  ${f}\n`
}
