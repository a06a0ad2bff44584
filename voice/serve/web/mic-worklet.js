"use strict";
// Runs on the audio thread: collects the microphone's samples into 20 ms frames and posts each to the page.
class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.size = Math.max(1, Math.round(sampleRate / 50));
    this.frame = new Float32Array(this.size);
    this.filled = 0;
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    let i = 0;
    while (i < input.length) {
      const n = Math.min(input.length - i, this.size - this.filled);
      this.frame.set(input.subarray(i, i + n), this.filled);
      this.filled += n; i += n;
      if (this.filled === this.size) {
        this.port.postMessage(this.frame, [this.frame.buffer]);  // transferred: this.frame is now empty
        this.frame = new Float32Array(this.size);
        this.filled = 0;
      }
    }
    return true;
  }
}
registerProcessor("mic-capture", MicCapture);
