// The write page's "use my own clip" form ([data-audio-upload], annotation/_own_clip.html).
// Record (shown only where the browser has a microphone API): the browser's own permission prompt
// comes after the person presses it; MediaRecorder records until Stop (or the task's longest clip,
// data-max-seconds), the microphone is released, and the recording (WebM/Opus, or MP4/AAC on
// Safari) is decoded and turned into a WAV in the page (wav.js), which the file input then holds:
// the person listens to it, and "Use this clip" posts it as any chosen file. A chosen file the
// server cannot read (an .m4a or .webm from a phone) is turned into a WAV the same way.
// The form's data-recorded becomes "ready" when a clip is in the input, "failed" when it cannot be.
(function () {
  "use strict";
  const READABLE = /\.(wav|flac|ogg|oga|opus|mp3)$/i;
  let recorder = null, ticker = null;

  function parts(form) {
    return {
      record: form.querySelector("[data-record]"), stop: form.querySelector("[data-stop]"),
      status: form.querySelector("[data-record-status]"), player: form.querySelector("[data-recording]"),
      input: form.querySelector("input[type=file]"),
    };
  }

  function say(form, text, state) {
    parts(form).status.textContent = text;
    if (state) form.dataset.recorded = state;
  }

  function hold(form, blob, name, note) {
    const p = parts(form);
    return window.dynabenchWav.fromBlob(blob).then(function (wav) {
      const files = new DataTransfer();
      files.items.add(new File([wav], name, {type: "audio/wav"}));
      p.input.files = files.files;
      if (p.player.src) URL.revokeObjectURL(p.player.src);
      p.player.src = URL.createObjectURL(wav);
      p.player.hidden = false;
      say(form, note + " Listen to it, then press Use this clip (or record again).", "ready");
    }).catch(function (error) {
      say(form, "This browser could not turn the audio into WAV (" + error + "): choose a WAV, FLAC, OGG or MP3 file instead.", "failed");
    });
  }

  function stop() {
    if (recorder && recorder.state !== "inactive") recorder.stop();
  }

  function start(form) {
    const p = parts(form);
    const most = Number(form.dataset.maxSeconds) || 60;
    p.record.disabled = true;
    say(form, "Waiting for your permission to use the microphone…", "asking");
    navigator.mediaDevices.getUserMedia({audio: true}).then(function (stream) {
      const chunks = [];
      recorder = new MediaRecorder(stream);
      const begun = performance.now();
      recorder.addEventListener("dataavailable", function (evt) { if (evt.data.size) chunks.push(evt.data); });
      recorder.addEventListener("stop", function () {
        clearInterval(ticker);
        stream.getTracks().forEach(function (track) { track.stop(); });
        const seconds = (performance.now() - begun) / 1000;
        p.stop.hidden = true;
        p.record.hidden = false;
        p.record.disabled = false;
        p.record.textContent = "Record again";
        say(form, "Converting the recording…", "converting");
        hold(form, new Blob(chunks, {type: recorder.mimeType}), "recording.wav", "Recorded " + seconds.toFixed(1) + " s.");
      });
      recorder.start(250);
      p.record.hidden = true;
      p.stop.hidden = false;
      p.stop.focus();
      ticker = setInterval(function () {
        const seconds = (performance.now() - begun) / 1000;
        form.dataset.recordedMs = String(Math.round(seconds * 1000));
        say(form, "Recording: " + seconds.toFixed(1) + " s (Stop when you are done).", "recording");
        if (seconds >= most) stop();
      }, 200);
    }).catch(function (error) {
      p.record.disabled = false;
      say(form, "The microphone is not available (" + error.name + "): choose a file instead.", "failed");
    });
  }

  function offerRecording(root) {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || !window.MediaRecorder) return;
    root.querySelectorAll("[data-audio-upload] [data-recorder]").forEach(function (el) { el.hidden = false; });
  }

  document.addEventListener("click", function (evt) {
    const form = evt.target.closest && evt.target.closest("[data-audio-upload]");
    if (!form) return;
    if (evt.target.closest("[data-record]")) start(form);
    else if (evt.target.closest("[data-stop]")) stop();
  });

  document.addEventListener("change", function (evt) {
    const form = evt.target.closest && evt.target.closest("[data-audio-upload]");
    const file = form && evt.target.files && evt.target.files[0];
    if (!file) return;
    if (READABLE.test(file.name)) { form.dataset.recorded = "ready"; return; }
    say(form, "Converting " + file.name + " to WAV…", "converting");
    hold(form, file, file.name.replace(/\.[^.]*$/, "") + ".wav", "Converted " + file.name + ".");
  });

  // A new workspace (after a submit, "New context" or an upload) stops a recording left running.
  document.addEventListener("htmx:beforeSwap", stop);
  document.addEventListener("htmx:afterSettle", function () { offerRecording(document); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { offerRecording(document); });
  else offerRecording(document);
})();
