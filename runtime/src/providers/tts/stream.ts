import { AbortedByCaller, bodyChunks, vendorFetch, type VendorRequest } from '../http.ts';
import type { AudioFormat, TtsResult } from '../types.ts';

/** An empty answer for a request the caller aborted before the vendor answered. */
function nothing(format: AudioFormat): TtsResult {
  return { format, audio: (async function* () {})() };
}

/**
 * Sends a TTS request and streams the audio as it arrives, in whole samples (a PCM16 chunk that
 * splits a sample keeps its odd byte for the next one). Status errors throw here; a connection that
 * drops mid-audio throws from the iteration; the caller's abort ends the audio quietly.
 */
export async function streamAudio(provider: string, request: VendorRequest & { signal: AbortSignal }, format: AudioFormat): Promise<TtsResult> {
  let response: Response;
  try {
    response = await vendorFetch(provider, request);
  } catch (error) {
    if (error instanceof AbortedByCaller) return nothing(format);
    throw error;
  }
  const sampleBytes = format.encoding === 'pcm16' ? 2 : 1;
  async function* audio(): AsyncGenerator<Buffer> {
    let carry: Buffer | null = null;
    for await (const chunk of bodyChunks(provider, response, request.signal)) {
      let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (carry) {
        bytes = Buffer.concat([carry, bytes]);
        carry = null;
      }
      const whole = bytes.length - (bytes.length % sampleBytes);
      if (whole < bytes.length) carry = Buffer.from(bytes.subarray(whole));
      if (whole > 0) yield bytes.subarray(0, whole);
    }
  }
  return { format, audio: audio() };
}
