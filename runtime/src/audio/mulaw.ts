/**
 * ITU-T G.711 μ-law, by table: the carrier leg is μ-law 8 kHz and every 20 ms frame in and out is
 * converted, so both directions are one array lookup per sample.
 */

const BIAS = 0x84;
const CLIP = 32635;

function encodeSample(sample: number): number {
  // The classic G.711 reference encoder (Sun's g711.c), on 16-bit input.
  let sign = 0;
  let magnitude = sample;
  if (magnitude < 0) {
    sign = 0x80;
    magnitude = -magnitude;
  }
  if (magnitude > CLIP) magnitude = CLIP;
  magnitude += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function decodeByte(code: number): number {
  const inverted = ~code & 0xff;
  const magnitude = (((inverted & 0x0f) << 3) + BIAS) << ((inverted & 0x70) >> 4);
  return inverted & 0x80 ? BIAS - magnitude : magnitude - BIAS;
}

/** code → 16-bit sample. */
export const MULAW_DECODE_TABLE: Int16Array = Int16Array.from({ length: 256 }, (_, code) => decodeByte(code));
/** (sample + 32768) → code. */
const ENCODE_TABLE: Uint8Array = Uint8Array.from({ length: 65536 }, (_, index) => encodeSample(index - 32768));

export function mulawEncodeSample(sample: number): number {
  return ENCODE_TABLE[(sample | 0) + 32768]!;
}

export function mulawDecodeSample(code: number): number {
  return MULAW_DECODE_TABLE[code & 0xff]!;
}

/** 16-bit samples → μ-law bytes. */
export function mulawEncode(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = ENCODE_TABLE[samples[i]! + 32768]!;
  return out;
}

/** μ-law bytes → 16-bit samples. */
export function mulawDecode(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_DECODE_TABLE[bytes[i]!]!;
  return out;
}

/** The μ-law code of silence (0xFF): what a carrier sends when nobody speaks. */
export const MULAW_SILENCE = 0xff;
