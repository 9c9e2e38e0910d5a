const MAX_LENGTH = 120

// Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\b(?:HeadlessChrome)\/(\d+)/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/\bcurl\/(\d+)/, 'curl'],
  [/\bpython-requests\/(\d+)/, 'Python requests'],
  [/\bnode-fetch\/(\d+)|\bundici\b|\bnode\b/i, 'Node.js'],
]

const SYSTEMS: Array<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/**
 * "Firefox 132 on Windows": what a person recognises in a list of sessions. A parser library
 * would name more devices, but a session list needs only the browser family, its major version
 * and the system; anything unrecognised keeps its first product token.
 */
export function summariseUserAgent(userAgent: string | undefined): string | null {
  const text = userAgent?.trim()
  if (!text) return null
  let browser: string | undefined
  for (const [pattern, name] of BROWSERS) {
    const match = pattern.exec(text)
    if (match) {
      browser = match[1] ? `${name} ${match[1]}` : name
      break
    }
  }
  browser ??= text.split(/[\s;(]/)[0]?.replace(/\/.*/, '') || 'Unknown client'
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1]
  return (system ? `${browser} on ${system}` : browser).slice(0, MAX_LENGTH)
}
