// The npm `espeak-ng` package is an Emscripten build without type declarations; this is the
// part of its module factory that the worker uses.
declare module 'espeak-ng' {
  interface EmscriptenFs {
    makedev(major: number, minor: number): number
    registerDevice(dev: number, ops: Record<string, unknown>): void
    mkdev(path: string, dev: number): void
    writeFile(path: string, data: string | Uint8Array): void
  }
  interface ESpeakModule {
    FS: EmscriptenFs
  }
  interface ESpeakOptions {
    arguments: string[]
    print?: (line: string) => void
    printErr?: (line: string) => void
    preRun?: Array<(module: ESpeakModule) => void>
    instantiateWasm?: (imports: object, done: (instance: object, module: object) => void) => object
  }
  const factory: (options: ESpeakOptions) => Promise<ESpeakModule>
  export default factory
}
