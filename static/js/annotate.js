// Answer selection for extractive QA: the annotator selects the answer in the passage
// (mouse, or keyboard: Shift + arrows, Ctrl/Alt for words, Home/End), and the form's
// hidden answer_text / answer_start fields and the "Selected answer" readout follow.
// Offsets are character offsets into the passage text exactly as the server sent it.
// Listeners are delegated on document, so fragments swapped in by htmx work unchanged.
(function () {
  "use strict";

  function setAnswer(form, text, start) {
    if (!form) return;
    const textInput = form.querySelector('input[name="answer_text"]');
    const startInput = form.querySelector('input[name="answer_start"]');
    if (!textInput || !startInput) return;
    textInput.value = text;
    startInput.value = text ? String(start) : "";
    const picked = form.querySelector("[data-answer-picked]");
    const none = form.querySelector("[data-answer-none]");
    if (picked) picked.textContent = text;
    if (none) none.hidden = Boolean(text);
  }

  function trimmed(text, start) {
    const lead = text.length - text.trimStart().length;
    return { text: text.trim(), start: start + lead };
  }

  // The selection inside a [data-passage] element, clipped to it: {passage, text, start}.
  function passageSelection() {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const node = range.commonAncestorContainer;
    const el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    let passage = el && el.closest("[data-passage]");
    if (!passage) {
      // A drag that started in the passage and ran past its end: clip to the passage.
      const anchor = sel.anchorNode && (sel.anchorNode.nodeType === Node.ELEMENT_NODE ? sel.anchorNode : sel.anchorNode.parentElement);
      passage = anchor && anchor.closest("[data-passage]");
      if (!passage) return null;
    }
    const whole = document.createRange();
    whole.selectNodeContents(passage);
    const clipped = range.cloneRange();
    if (clipped.compareBoundaryPoints(Range.START_TO_START, whole) < 0) clipped.setStart(whole.startContainer, whole.startOffset);
    if (clipped.compareBoundaryPoints(Range.END_TO_END, whole) > 0) clipped.setEnd(whole.endContainer, whole.endOffset);
    const before = document.createRange();
    before.selectNodeContents(passage);
    before.setEnd(clipped.startContainer, clipped.startOffset);
    const t = trimmed(clipped.toString(), before.toString().length);
    return { passage: passage, text: t.text, start: t.start };
  }

  document.addEventListener("selectionchange", function () {
    const found = passageSelection();
    if (found && found.text) setAnswer(found.passage.closest("form"), found.text, found.start);
  });

  // Keyboard selection in the (non-editable) passage: a caret moved with the arrow keys.
  const KEYS = {
    ArrowLeft: ["backward", "character"], ArrowRight: ["forward", "character"],
    Home: ["backward", "lineboundary"], End: ["forward", "lineboundary"],
  };
  function firstText(el) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    return walker.nextNode() || el;
  }
  document.addEventListener("keydown", function (event) {
    const passage = event.target.closest && event.target.closest("[data-passage]");
    if (!passage || !(event.key in KEYS)) return;
    const sel = window.getSelection();
    if (!sel.rangeCount || !passage.contains(sel.anchorNode)) sel.collapse(firstText(passage), 0);
    let [direction, unit] = KEYS[event.key];
    if (unit === "character" && (event.ctrlKey || event.altKey)) unit = "word";
    sel.modify(event.shiftKey ? "extend" : "move", direction, unit);
    event.preventDefault();
  });
  document.addEventListener("focusin", function (event) {
    const passage = event.target.closest && event.target.closest("[data-passage]");
    if (!passage) return;
    const sel = window.getSelection();
    if (!sel.rangeCount || !passage.contains(sel.anchorNode)) sel.collapse(firstText(passage), 0);
  });

  // The sandbox's passage is an editable textarea: its selection gives the offsets directly.
  document.addEventListener("select", function (event) {
    const area = event.target;
    if (!area.matches || !area.matches("textarea[data-passage-input]")) return;
    const raw = area.value.slice(area.selectionStart, area.selectionEnd);
    const t = trimmed(raw, area.selectionStart);
    setAnswer(area.closest("form"), t.text, t.start);
  }, true);
  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-passage-input]")) setAnswer(event.target.closest("form"), "", 0);
  });

  // Ctrl+Enter (or Cmd+Enter) submits the example form from anywhere in the workspace.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    const form = event.target.closest && event.target.closest("#workspace form, #sandbox form");
    const fallback = document.querySelector("#workspace form[hx-post], #sandbox form[hx-post]");
    const chosen = form || (document.activeElement === document.body ? fallback : null);
    if (!chosen) return;
    event.preventDefault();
    chosen.requestSubmit();
  });
})();
