// Validation queue keys (listed in the page's "?" overlay): 1 or c correct, 2 or i incorrect,
// 3 or f flag (the reason field opens and takes the focus: type why, then Enter), Enter
// submits, s skips, p plays or pauses the example's clip (audio tasks). Single keys act only
// outside text fields (Esc leaves a field).
// The fields for the picked verdict (correction, flag reason) are shown, the others hidden.
// Enter (or Submit) with no verdict picked says so next to the verdicts instead of doing nothing.
(function () {
  "use strict";
  const VERDICTS = {"1": "correct", c: "correct", "2": "incorrect", i: "incorrect", "3": "flagged", f: "flagged"};

  function typing() {
    return window.dynabenchTyping ? window.dynabenchTyping(document.activeElement) : false;
  }

  const NO_VERDICT = "Pick a verdict first: 1 correct, 2 incorrect or 3 flag (or click one), then Enter.";

  function noVerdict(form) {
    if (form.querySelector('input[name="label"]:checked')) return false;
    let note = form.querySelector("[data-verdict-needed]");
    if (!note) {
      note = document.createElement("p");
      note.className = "error";
      note.setAttribute("role", "alert");
      note.dataset.verdictNeeded = "";
      const first = form.querySelector('input[name="label"]');
      const where = (first && first.closest("fieldset")) || form.firstElementChild;
      where.insertAdjacentElement("afterend", note);
    }
    note.textContent = NO_VERDICT;
    return true;
  }

  function pick(form, verdict) {
    const radio = form.querySelector('input[name="label"][value="' + verdict + '"]');
    if (!radio) return;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", {bubbles: true}));
    const note = form.querySelector("[data-verdict-needed]");
    if (note) note.remove();
    const reason = verdict === "flagged" ? form.querySelector('input[name="flag_reason"]') : null;
    (reason || radio).focus();
  }

  function togglePlay(player) {
    if (!player.paused) { player.pause(); return; }
    const started = player.play();  // a promise in current browsers: refused when the clip cannot play
    if (started && started.catch) started.catch(function (error) { console.warn("The clip did not play:", error.message); });
  }

  document.addEventListener("keydown", function (evt) {
    const form = document.getElementById("review-form");
    if (!form || evt.ctrlKey || evt.metaKey || evt.altKey || typing()) return;
    const dialog = document.getElementById("keys-help");
    if (dialog && dialog.open) return;
    const key = evt.key.length === 1 ? evt.key.toLowerCase() : evt.key;
    if (VERDICTS[key]) {
      evt.preventDefault();
      pick(form, VERDICTS[key]);
    } else if (key === "Enter") {
      if (document.activeElement && document.activeElement.tagName === "BUTTON") return;  // the button's own action
      evt.preventDefault();
      if (noVerdict(form)) return;
      form.requestSubmit();
    } else if (key === "s") {
      const skip = document.getElementById("skip-button");
      if (skip) { evt.preventDefault(); skip.click(); }
    } else if (key === "p") {
      const player = document.querySelector("#review [data-context-audio] audio");
      if (player) { evt.preventDefault(); togglePlay(player); }
    }
  });

  // A click on Submit with no verdict: the same message, and no request (htmx listens to the same event).
  document.addEventListener("submit", function (evt) {
    const form = evt.target;
    if (form.id !== "review-form" || !noVerdict(form)) return;
    evt.preventDefault();
    evt.stopImmediatePropagation();
  }, true);

  document.addEventListener("change", function (evt) {
    if (evt.target.name !== "label" || !evt.target.closest("#review-form")) return;
    const stale = document.querySelector("#review-form [data-verdict-needed]");
    if (stale) stale.remove();
    const label = evt.target.value;
    document.querySelectorAll("#review-form [data-for-label]").forEach(function (el) {
      el.hidden = !el.dataset.forLabel.split(" ").includes(label);
    });
  });

  // QA corrections: with "incorrect" picked, selecting a span of the passage fills the corrected
  // answer and its character offset (the passage's text exactly as shown); typing clears the offset,
  // so the server finds the typed text itself. Without JS the typed field works alone.
  function passageSpan(passage) {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    if (!passage.contains(range.startContainer) || !passage.contains(range.endContainer)) return null;
    const before = document.createRange();
    before.selectNodeContents(passage);
    before.setEnd(range.startContainer, range.startOffset);
    const raw = range.toString();
    const lead = raw.length - raw.trimStart().length;
    return {text: raw.trim(), start: before.toString().length + lead};
  }

  document.addEventListener("selectionchange", function () {
    const form = document.getElementById("review-form");
    const passage = document.querySelector("[data-review-passage]");
    const field = form && form.querySelector("[data-correction-from-passage]");
    if (!passage || !field || field.closest("[hidden]")) return;
    const span = passageSpan(passage);
    if (!span || !span.text) return;
    field.value = span.text;
    const start = form.querySelector("[data-correction-start]");
    if (start) start.value = String(span.start);
  });

  document.addEventListener("input", function (evt) {
    if (!evt.target.matches || !evt.target.matches("[data-correction-from-passage]")) return;
    const start = evt.target.form && evt.target.form.querySelector("[data-correction-start]");
    if (start) start.value = "";
  });
})();
