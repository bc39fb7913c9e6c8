// A 16-bit PCM WAV (RIFF, one channel) of decoded audio, for the server's libsndfile, which reads
// neither the WebM/Opus (Chrome, Firefox) nor the MP4/AAC (Safari) that browsers record.
// dynabenchWav.encode(audioBuffer) -> Blob: the buffer's channels averaged, clipped to [-1, 1],
// at the buffer's own sample rate. dynabenchWav.fromBlob(blob) -> Promise<Blob>: any audio the
// browser can decode (AudioContext.decodeAudioData), as such a WAV.
(function () {
  "use strict";

  function encode(buffer) {
    const frames = buffer.length, rate = buffer.sampleRate, channels = buffer.numberOfChannels;
    const view = new DataView(new ArrayBuffer(44 + 2 * frames));
    const ascii = function (at, text) { for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i)); };
    ascii(0, "RIFF"); view.setUint32(4, 36 + 2 * frames, true); ascii(8, "WAVE");
    ascii(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
    view.setUint32(24, rate, true); view.setUint32(28, 2 * rate, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true);
    ascii(36, "data"); view.setUint32(40, 2 * frames, true);
    const data = [];
    for (let c = 0; c < channels; c++) data.push(buffer.getChannelData(c));
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += data[c][i];
      const s = Math.max(-1, Math.min(1, sum / channels));
      view.setInt16(44 + 2 * i, s < 0 ? s * 0x8000 : s * 0x7fff, true);
    }
    return new Blob([view], {type: "audio/wav"});
  }

  function fromBlob(blob) {
    const Context = window.AudioContext || window.webkitAudioContext;
    const context = new Context();
    return blob.arrayBuffer().then(function (bytes) {
      // Older Safari only calls back; newer browsers also return a promise.
      return new Promise(function (resolve, reject) {
        const promise = context.decodeAudioData(bytes, resolve, reject);
        if (promise && promise.then) promise.then(resolve, reject);
      });
    }).then(function (buffer) {
      return encode(buffer);
    }).finally(function () {
      if (context.close) context.close();
    });
  }

  window.dynabenchWav = {encode: encode, fromBlob: fromBlob};
})();
