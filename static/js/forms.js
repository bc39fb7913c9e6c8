// Character counters: every field with data-max-length has a <p data-char-count-for="<field id>">
// showing "n / max characters". It turns amber at 90 % of the limit (before it is reached)
// and red past it, saying by how much; nothing is cut: the server refuses too long text
// with a message naming the limit. Delegated on document, so htmx-swapped forms work too.
(function () {
  "use strict";
  const WARN_AT = 0.9;

  function update(field) {
    const counter = document.querySelector('[data-char-count-for="' + field.id + '"]');
    if (!counter) return;
    const max = parseInt(counter.dataset.maxLength || field.dataset.maxLength, 10);
    const n = field.value.length;
    const chars = counter.querySelector("[data-chars]");
    counter.classList.toggle("near", n >= WARN_AT * max && n <= max);
    counter.classList.toggle("over", n > max);
    if (chars) chars.textContent = String(n);
    let note = counter.querySelector("[data-over]");
    if (n > max) {
      if (!note) { note = document.createElement("span"); note.dataset.over = ""; counter.appendChild(note); }
      note.textContent = " · " + (n - max) + " over the limit: shorten it";
    } else if (note) {
      note.remove();
    }
  }

  document.addEventListener("input", function (evt) {
    if (evt.target.dataset && evt.target.dataset.maxLength !== undefined) update(evt.target);
  });
  function all() { document.querySelectorAll("[data-max-length][id]").forEach(function (f) { if (f.tagName !== "P") update(f); }); }
  document.addEventListener("DOMContentLoaded", all);
  document.addEventListener("htmx:afterSettle", all);
})();
