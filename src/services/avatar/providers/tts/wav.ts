/** The PCM layout espeak-ng produces: 22,050 Hz, mono, signed 16-bit little-endian. */
export const ESPEAK_SAMPLE_RATE = 22_050
const BYTES_PER_SAMPLE = 2

/**
 * A canonical 44-byte RIFF/WAVE header for mono 16-bit PCM. With `dataBytes` unknown (a
 * streamed reply), the sizes are the "unknown length" maximum that streaming writers use;
 * players then read up to the end of the stream.
 */
export function wavHeader(sampleRate: number, dataBytes?: number): Uint8Array {
  const header = new Uint8Array(44)
  const view = new DataView(header.buffer)
  const data = dataBytes ?? 0xffffffff - 36
  const ascii = (offset: number, text: string) => {
    for (let index = 0; index < text.length; index++) header[offset + index] = text.charCodeAt(index)
  }
  ascii(0, 'RIFF')
  view.setUint32(4, data + 36, true)
  ascii(8, 'WAVE')
  ascii(12, 'fmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, 1, true)
  view.setUint32(24, sampleRate, true)
  view.setUint32(28, sampleRate * BYTES_PER_SAMPLE, true)
  view.setUint16(32, BYTES_PER_SAMPLE, true)
  view.setUint16(34, 16, true)
  ascii(36, 'data')
  view.setUint32(40, data, true)
  return header
}
