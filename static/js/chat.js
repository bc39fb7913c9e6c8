// Streams a chat turn into the page (annotation/chat_views.py): the form is POSTed with
// "Accept: text/event-stream" and the server-sent events are read as they arrive: "token"
// ({side, t}) appends text to the answer being written, "done" ({html}) swaps in the new
// #chat fragment, "problem" ({message, html}) shows why. Without JavaScript the form posts
// as usual and the whole answer comes with the page.
// The conversation is stored on the server: the address carries it (?resume=<state token>), so a
// reload, or a stream cut off mid-answer, shows it as stored; the prompt being typed is kept in
// sessionStorage (per task page) until its answer comes, so it is never lost.
(function () {
  "use strict";

  function stateToken() {
    const input = document.querySelector("#chat form[data-chat-stream] input[name=state]");
    return input ? input.value : "";
  }

  function resumeUrl() {
    return window.location.pathname + "?resume=" + encodeURIComponent(stateToken());
  }

  function keep() {
    const token = stateToken();
    if (!token) return;
    if (!new URLSearchParams(window.location.search).has("saved")) window.history.replaceState(null, "", resumeUrl());
    const prompt = document.getElementById("prompt");
    const key = "chat-prompt:" + window.location.pathname;
    if (!prompt) return;
    try {
      if (!prompt.value && window.sessionStorage.getItem(key)) prompt.value = window.sessionStorage.getItem(key);
      prompt.addEventListener("input", function () { window.sessionStorage.setItem(key, prompt.value); });
    } catch (e) { /* storage refused: the server still keeps every prompt it accepted */ }
  }

  function forget() {
    try { window.sessionStorage.removeItem("chat-prompt:" + window.location.pathname); } catch (e) { /* nothing kept */ }
  }

  function bubble(container, cls, label) {
    const div = document.createElement("div");
    div.className = "turn " + cls;
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = label;
    const text = document.createElement("span");
    text.className = "text";
    div.append(badge, " ", text);
    container.append(div);
    return text;
  }

  function swap(html) {
    const chat = document.getElementById("chat");
    if (!chat || !html) return;
    const holder = document.createElement("div");
    holder.innerHTML = html;
    const fresh = holder.firstElementChild;
    chat.replaceWith(fresh);
    const prompt = fresh.querySelector("#prompt");
    if (prompt) prompt.focus();
  }

  async function send(form) {
    const transcript = document.querySelector("[data-transcript]");
    const status = form.querySelector("[data-chat-status]");
    const button = form.querySelector("[data-send]");
    const sides = Number(form.dataset.sides || "1");
    const data = new FormData(form);
    bubble(transcript, "user", "you").textContent = data.get("prompt");
    const row = sides > 1 ? document.createElement("div") : transcript;
    if (sides > 1) { row.className = "pair"; transcript.append(row); }
    const targets = [];
    for (let i = 0; i < sides; i++) {
      targets.push(bubble(row, "model", sides > 1 ? "AB"[i] : "model"));
      targets[i].parentElement.dataset.streaming = "";
    }
    button.disabled = true;
    if (status) status.textContent = "The model is answering… (the page waits up to " + (form.dataset.waitS || "300") + " s)";
    const response = await fetch(form.action, { method: "POST", body: data, headers: { Accept: "text/event-stream" }, credentials: "same-origin" });
    if (!response.ok || !(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
      document.open(); document.write(await response.text()); document.close();
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message", payload = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) payload += line.slice(5).trim();
        }
        const event = payload ? JSON.parse(payload) : {};
        if (name === "token") {
          targets[event.side || 0].textContent += event.t;
          if (!window.chatFirstToken) window.chatFirstToken = performance.now();
        } else if (name === "done") {
          forget();
          swap(event.html);
          keep();
        } else if (name === "problem") {
          if (event.html) { swap(event.html); keep(); }
          else if (status) { status.textContent = event.message; button.disabled = false; }
        }
      }
    }
  }

  document.addEventListener("submit", function (e) {
    const form = e.target;
    if (!form.matches("form[data-chat-stream]") || !window.fetch || !window.ReadableStream) return;
    e.preventDefault();
    // A stream cut off: the server finishes and stores the turn; the stored conversation shows it.
    send(form).catch(function () { window.location.assign(resumeUrl()); });
  });

  keep();
})();
