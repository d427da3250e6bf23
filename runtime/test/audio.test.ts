import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertAudio, convertBuffer } from '../src/audio/convert.ts';
import { mulawDecode, mulawDecodeSample, mulawEncode, mulawEncodeSample } from '../src/audio/mulaw.ts';
import { pcm16ToSamples, rms, samplesToPcm16 } from '../src/audio/pcm.ts';
import { resample } from '../src/audio/resampler.ts';
import { StereoRecorder } from '../src/audio/stereo-recorder.ts';
import { synthesizeSpeech } from '../src/audio/synthesize.ts';
import { decodeWav, encodeWav } from '../src/audio/wav.ts';

/**
 * G.711 μ-law from the recommendation's own description: a code is the inverted byte
 * sign·exponent(3 bits)·mantissa(4 bits), sign bit 1 for positive; its 14-bit value is
 * ((2·mantissa + 33)·2^exponent − 33), scaled ×4 to 16 bits; the step within segment e is 2^(e+1)·4.
 */
function referenceDecode(code: number): number {
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const magnitude = ((2 * mantissa + 33) * 2 ** exponent - 33) * 4;
  return (inverted & 0x80 ? -magnitude : magnitude) + 0; // + 0: no negative zero
}

function correlation(a: Int16Array, b: Int16Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

/** Energy of a signal between two frequencies (a plain DFT over a window), for spectrum checks. */
function bandEnergy(samples: Int16Array, sampleRate: number, fromHz: number, toHz: number): number {
  const n = 2048;
  const start = Math.floor((samples.length - n) / 2);
  let energy = 0;
  for (let k = Math.ceil((fromHz * n) / sampleRate); k <= Math.floor((toHz * n) / sampleRate); k++) {
    let re = 0;
    let im = 0;
    for (let i = 0; i < n; i++) {
      const angle = (2 * Math.PI * k * i) / n;
      re += samples[start + i]! * Math.cos(angle);
      im -= samples[start + i]! * Math.sin(angle);
    }
    energy += re * re + im * im;
  }
  return energy;
}

describe('G.711 μ-law', () => {
  it('decodes every code to the value the recommendation defines', () => {
    for (let code = 0; code < 256; code++) assert.equal(mulawDecodeSample(code), referenceDecode(code), `code 0x${code.toString(16)}`);
    assert.equal(mulawDecodeSample(0x00), -32124);
    assert.equal(mulawDecodeSample(0x80), 32124);
    assert.equal(mulawDecodeSample(0xff), 0);
    assert.equal(mulawDecodeSample(0x7f), 0);
  });

  it('round-trips every code (negative zero 0x7F encodes as 0xFF) and quantizes each sample to its segment within half a step', () => {
    for (let code = 0; code < 256; code++) assert.equal(mulawEncodeSample(mulawDecodeSample(code)), code === 0x7f ? 0xff : code);
    assert.equal(mulawEncodeSample(0), 0xff);
    assert.equal(mulawEncodeSample(32767), 0x80);
    assert.equal(mulawEncodeSample(-32768), 0x00);
    for (let sample = -32124; sample <= 32124; sample += 7) {
      const decoded = referenceDecode(mulawEncodeSample(sample));
      const exponent = (~mulawEncodeSample(sample) >> 4) & 0x07;
      const halfStep = 2 ** (exponent + 1) * 4 / 2;
      assert.ok(Math.abs(decoded - sample) <= halfStep + 4, `sample ${sample} → ${decoded}`);
    }
  });

  it('converts buffers both ways', () => {
    const samples = Int16Array.from([0, 1000, -1000, 32000, -32000]);
    const decoded = mulawDecode(mulawEncode(samples));
    assert.deepEqual([...decoded].map((value, i) => Math.abs(value - samples[i]!) < 1100), [true, true, true, true, true]);
  });
});

describe('resampling with the Speex resampler', () => {
  it('keeps speech duration and energy from 16 kHz to 8 kHz and back, and the round trip correlates with the original', async () => {
    const speech = pcm16ToSamples(await synthesizeSpeech('The quick brown fox jumps over the lazy dog.', 16000));
    const down = resample(speech, 16000, 8000);
    const up = resample(down, 8000, 16000);
    assert.ok(Math.abs(down.length - speech.length / 2) <= 2, `8 kHz length ${down.length} vs ${speech.length / 2}`);
    assert.ok(Math.abs(up.length - speech.length) <= 4);
    // eSpeak's speech lives mostly below 4 kHz: energy is kept within a few percent.
    assert.ok(Math.abs(rms(down) / rms(speech) - 1) < 0.05, `rms ${rms(down)} vs ${rms(speech)}`);
    assert.ok(correlation(speech, up) > 0.95, `correlation ${correlation(speech, up)}`);
  });

  it('filters instead of dropping samples: a 5 kHz tone vanishes at 8 kHz instead of folding back to 3 kHz', () => {
    const rate = 16000;
    const tone = Int16Array.from({ length: rate }, (_, i) => Math.round(10000 * Math.sin((2 * Math.PI * 5000 * i) / rate)));
    const down = resample(tone, rate, 8000);
    const dropped = tone.filter((_, i) => i % 2 === 0); // what sample dropping gives: the alias at 3 kHz
    assert.ok(bandEnergy(dropped, 8000, 2900, 3100) > 1e12);
    assert.ok(bandEnergy(down, 8000, 2900, 3100) < bandEnergy(dropped, 8000, 2900, 3100) / 1000, 'alias energy is suppressed by > 30 dB');
  });

  it('streams: chunks of odd sizes give the same audio as one conversion, and 24 kHz PCM becomes 8 kHz μ-law of the same duration', async () => {
    const speech = await synthesizeSpeech('Hello, how can I help you today?', 24000);
    const from = { encoding: 'pcm16' as const, sampleRate: 24000 };
    const to = { encoding: 'mulaw' as const, sampleRate: 8000 };
    const whole = convertBuffer(speech, from, to);
    const converter = convertAudio(from, to);
    const parts: Buffer[] = [];
    for (let offset = 0; offset < speech.length; offset += 1001) parts.push(converter.write(speech.subarray(offset, offset + 1001)));
    parts.push(converter.end());
    const streamed = Buffer.concat(parts);
    assert.equal(streamed.length, whole.length);
    assert.ok(correlation(mulawDecode(streamed), mulawDecode(whole)) > 0.999);
    assert.ok(Math.abs(whole.length / 8000 - speech.length / 2 / 24000) < 0.002, 'duration kept');
  });
});

describe('WAV', () => {
  it('writes the RIFF header fields of 16-bit PCM and reads them back', () => {
    const samples = Int16Array.from([1, -2, 3, -4, 5, -6]);
    const wav = encodeWav({ sampleRate: 8000, channels: 2, samples });
    assert.equal(wav.length, 44 + 12);
    assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
    assert.equal(wav.readUInt32LE(4), 36 + 12);
    assert.equal(wav.toString('ascii', 8, 16), 'WAVEfmt ');
    assert.equal(wav.readUInt32LE(16), 16);
    assert.equal(wav.readUInt16LE(20), 1);
    assert.equal(wav.readUInt16LE(22), 2);
    assert.equal(wav.readUInt32LE(24), 8000);
    assert.equal(wav.readUInt32LE(28), 8000 * 2 * 2);
    assert.equal(wav.readUInt16LE(32), 4);
    assert.equal(wav.readUInt16LE(34), 16);
    assert.equal(wav.toString('ascii', 36, 40), 'data');
    assert.equal(wav.readUInt32LE(40), 12);
    assert.equal(wav.readInt16LE(46), -2);
    assert.deepEqual(decodeWav(wav), { sampleRate: 8000, channels: 2, samples });
  });
});

describe('StereoRecorder', () => {
  it('cuts a frame that arrived in the call\'s last 20 ms at the call\'s end', () => {
    const recorder = new StereoRecorder(8000);
    recorder.addCaller(990, samplesToPcm16(Int16Array.from({ length: 160 }, () => 500)), { encoding: 'pcm16', sampleRate: 8000 });
    const wav = decodeWav(recorder.toWav(1000));
    assert.equal(wav.samples.length / 2, 8000, 'exactly one second');
    assert.equal(wav.samples[7999 * 2], 500, 'the frame\'s first 10 ms are kept');
  });

  it('puts a caller frame at 1000 ms on the left, an agent frame at 1500 ms on the right, silence elsewhere, as long as the call', () => {
    const recorder = new StereoRecorder(8000);
    const format = { encoding: 'pcm16' as const, sampleRate: 8000 };
    const callerFrame = Int16Array.from({ length: 160 }, () => 1000); // 20 ms
    const agentFrame = Int16Array.from({ length: 160 }, () => -2000);
    recorder.addCaller(1000, samplesToPcm16(callerFrame), format);
    recorder.addAgent(1500, mulawEncode(agentFrame), { encoding: 'mulaw', sampleRate: 8000 });
    const wav = decodeWav(recorder.toWav(3000));
    assert.equal(wav.channels, 2);
    assert.equal(wav.samples.length / 2, 3 * 8000);
    const left = (i: number) => wav.samples[i * 2]!;
    const right = (i: number) => wav.samples[i * 2 + 1]!;
    assert.equal(left(7999), 0);
    assert.equal(left(8000), 1000);
    assert.equal(left(8159), 1000);
    assert.equal(left(8160), 0);
    assert.equal(right(8000), 0);
    assert.equal(right(12000), mulawDecodeSample(mulawEncodeSample(-2000)));
    assert.equal(right(12160), 0);
    assert.equal(left(12000), 0);
  });
});
