/**
 * The speaker side of "Talk to agent": a small jitter buffer on the audio thread. The page posts the
 * agent's audio already at the context's rate (Float32); playback starts once `primeSamples` (about
 * 80 ms) are queued, so frames arriving a little late do not click; an empty buffer plays silence and
 * primes again. `{flush: true}` drops what is queued (the agent was interrupted). Every 100 ms it
 * reports how much it has played and holds, for the page's indicators; each time playback starts
 * (after priming) it posts `{startedAt}`, the context time (s) of the first sample it plays.
 */
class JitterBufferPlayer extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.primeSamples = Math.round(sampleRate * ((options.processorOptions && options.processorOptions.primeMs) || 80) / 1000);
    this.chunks = [];
    this.offset = 0; // read position in chunks[0]
    this.queued = 0;
    this.playing = false;
    this.played = 0;
    this.sinceReport = 0;
    this.port.onmessage = (event) => {
      if (event.data && event.data.flush) {
        this.chunks = [];
        this.offset = 0;
        this.queued = 0;
        this.playing = false;
        return;
      }
      this.chunks.push(event.data);
      this.queued += event.data.length;
    };
  }

  process(_inputs, outputs) {
    const output = outputs[0][0];
    if (!this.playing && this.queued >= this.primeSamples) {
      this.playing = true;
      this.port.postMessage({ startedAt: currentTime }); // this block's first sample is the first one played
    }
    let written = 0;
    while (this.playing && written < output.length && this.chunks.length > 0) {
      const chunk = this.chunks[0];
      const take = Math.min(output.length - written, chunk.length - this.offset);
      output.set(chunk.subarray(this.offset, this.offset + take), written);
      written += take;
      this.offset += take;
      this.queued -= take;
      if (this.offset === chunk.length) { this.chunks.shift(); this.offset = 0; }
    }
    if (written < output.length) {
      output.fill(0, written);
      if (this.queued === 0) this.playing = false; // ran dry: wait for the buffer to fill again
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(output);
    this.played += written;
    this.sinceReport += output.length;
    if (this.sinceReport >= sampleRate / 10) {
      this.sinceReport = 0;
      this.port.postMessage({ playedMs: (this.played / sampleRate) * 1000, queuedMs: (this.queued / sampleRate) * 1000 });
    }
    return true;
  }
}

registerProcessor('jitter-buffer-player', JitterBufferPlayer);
