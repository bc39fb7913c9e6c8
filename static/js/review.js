// Validation queue keys (listed in the page's "?" overlay): 1 or c correct, 2 or i incorrect,
// 3 or f flag (the reason field opens and takes the focus: type why, then Enter), Enter
// submits, s skips. Single keys act only outside text fields (Esc leaves a field).
// The fields for the picked verdict (correction, flag reason) are shown, the others hidden.
(function () {
  "use strict";
  const VERDICTS = {"1": "correct", c: "correct", "2": "incorrect", i: "incorrect", "3": "flagged", f: "flagged"};

  function typing() {
    return window.dynabenchTyping ? window.dynabenchTyping(document.activeElement) : false;
  }

  function pick(form, verdict) {
    const radio = form.querySelector('input[name="label"][value="' + verdict + '"]');
    if (!radio) return;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", {bubbles: true}));
    const reason = verdict === "flagged" ? form.querySelector('input[name="flag_reason"]') : null;
    (reason || radio).focus();
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
      form.requestSubmit();
    } else if (key === "s") {
      const skip = document.getElementById("skip-button");
      if (skip) { evt.preventDefault(); skip.click(); }
    }
  });

  document.addEventListener("change", function (evt) {
    if (evt.target.name !== "label" || !evt.target.closest("#review-form")) return;
    const label = evt.target.value;
    document.querySelectorAll("#review-form [data-for-label]").forEach(function (el) {
      el.hidden = !el.dataset.forLabel.split(" ").includes(label);
    });
  });
})();
