/**
 * The microphone side of "Talk to agent" (extensions.md §11): runs on the audio thread, takes the
 * context's rate (44.1 or 48 kHz, whatever the device gives), low-passes and resamples it to 16 kHz,
 * and posts 20 ms frames of 16-bit little-endian mono PCM (640 bytes) to the page, which sends them
 * as they come. The low-pass (two one-pole stages at about 7 kHz) keeps the speech band and cuts most
 * of what would alias above the new Nyquist frequency (8 kHz).
 * Before its first frame it posts `{startedAt}`, the context time (s) of its first sample: sample n of
 * what it sends was heard by the graph at startedAt + n / 16000, which lets the page (and
 * bench/console.ts) place the caller's words on its own clock.
 */
const OUT_RATE = 16000;
const FRAME_SAMPLES = 320; // 20 ms at 16 kHz

class PcmCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE; // input samples per output sample
    this.position = 0; // where the next output sample falls, in input samples from the current block's start
    this.previous = 0; // the last filtered input sample of the previous block (for interpolation across blocks)
    const alpha = 1 - Math.exp((-2 * Math.PI * 7000) / sampleRate);
    this.alpha = alpha;
    this.stage1 = 0;
    this.stage2 = 0;
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.started = false;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    if (!this.started) {
      this.started = true;
      this.port.postMessage({ startedAt: currentTime });
    }
    const filtered = new Float32Array(channel.length);
    for (let i = 0; i < channel.length; i++) {
      this.stage1 += this.alpha * (channel[i] - this.stage1);
      this.stage2 += this.alpha * (this.stage1 - this.stage2);
      filtered[i] = this.stage2;
    }
    // Output samples at position p (in input samples; -1 is the previous block's last one), linearly interpolated.
    while (this.position < channel.length - 1) {
      const base = Math.floor(this.position);
      const fraction = this.position - base;
      const a = base < 0 ? this.previous : filtered[base];
      const b = filtered[base + 1];
      const value = Math.max(-1, Math.min(1, a + (b - a) * fraction));
      this.frame[this.filled++] = value < 0 ? value * 0x8000 : value * 0x7fff;
      if (this.filled === FRAME_SAMPLES) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(FRAME_SAMPLES);
        this.filled = 0;
      }
      this.position += this.step;
    }
    this.position -= channel.length;
    this.previous = filtered[channel.length - 1];
    return true;
  }
}

registerProcessor('pcm-capture', PcmCapture);
