// `@echogarden/espeak-ng-emscripten` is espeak-ng's library (not its command line) compiled
// with Emscripten, without type declarations; this is the part of it the worker uses.
declare module '@echogarden/espeak-ng-emscripten' {
  /** One event of a synthesis, as the package's wrapper reads espeak's `espeak_EVENT`. */
  interface EspeakEvent {
    type: 'word' | 'sentence' | 'mark' | 'play' | 'end' | 'msg_terminated' | 'phoneme' | 'samplerate'
    text_position: number
    word_length: number
    /** Milliseconds from the start of this synthesis. */
    audio_position: number
    /** The phoneme's name (IPA) for `phoneme` events. */
    id: string | number | undefined
  }
  interface ESpeakNgWorker {
    /** 0 when the voice exists. */
    set_voice(name: string): number
    /** Words per minute. */
    set_rate(wordsPerMinute: number): number
    get_samplerate(): number
    /** Synthesises synchronously, calling back with each buffer of 16-bit PCM and its events; returning true stops. */
    synthesize(text: string, callback: (audio: Int16Array | null, events: EspeakEvent[]) => boolean): void
  }
  interface ESpeakNgModule {
    eSpeakNGWorker: new () => ESpeakNgWorker
  }
  const factory: () => Promise<ESpeakNgModule>
  export default factory
}
