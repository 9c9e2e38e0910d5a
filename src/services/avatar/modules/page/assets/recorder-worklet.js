// Hands the microphone's samples to the page, block by block (AudioWorklet thread), with the
// AudioContext time of each block's first sample.
class Recorder extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0]?.[0]
    if (channel) this.port.postMessage({ samples: channel.slice(0), time: currentTime })
    return true
  }
}
registerProcessor('recorder', Recorder)
