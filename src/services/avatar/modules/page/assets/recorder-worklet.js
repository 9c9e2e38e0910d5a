// Hands the microphone's samples to the page, block by block (AudioWorklet thread).
class Recorder extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0]?.[0]
    if (channel) this.port.postMessage(channel.slice(0))
    return true
  }
}
registerProcessor('recorder', Recorder)
