// Keyboard help on every page: "?" opens the list of shortcuts (the <dialog id="keys-help">
// of templates/base.html, rows added by each page's {% block keys %}); Esc closes it (the
// dialog's own behaviour). Esc in a text field leaves it, so single-key shortcuts work again.
// After an htmx swap has settled, focus goes where the person expects: the first element of
// the new content marked data-focus-after-swap, else the first field of a workspace marked
// data-focus-first-field; a screen reader then reads the new content from there. Settled,
// not merely swapped: htmx binds the new content's forms while it settles, so a key pressed
// once the focus has arrived posts through htmx instead of reloading the page.
// On a full page load the same workspace's first field takes the focus (the create page), unless
// the person already focused something or followed a link to an anchor.
(function () {
  "use strict";

  function typingIn(el) {
    if (!el) return false;
    if (el.isContentEditable) return true;
    if (el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit", "reset"].includes(el.type);
  }
  window.dynabenchTyping = typingIn;

  function toggleHelp() {
    const dialog = document.getElementById("keys-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else dialog.showModal();
  }

  document.addEventListener("keydown", function (evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    if (evt.key === "Escape" && typingIn(document.activeElement)) {
      const form = document.activeElement.form;
      document.activeElement.blur();
      if (form) { form.setAttribute("tabindex", "-1"); form.focus(); }
      return;
    }
    if (evt.key === "?" && !typingIn(document.activeElement)) {
      evt.preventDefault();
      toggleHelp();
    }
  });
  document.addEventListener("click", function (evt) {
    if (evt.target.closest && evt.target.closest("[data-keys-open]")) toggleHelp();
  });

  function firstField(workspace) {
    return workspace.querySelector("textarea, input[type=text], [data-passage]");
  }

  function focusOnLoad() {
    if (location.hash || (document.activeElement && document.activeElement !== document.body)) return;
    const workspace = document.querySelector("[data-focus-first-field]");
    const field = workspace && firstField(workspace);
    if (field) field.focus();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusOnLoad); else focusOnLoad();

  document.addEventListener("htmx:afterSettle", function (evt) {
    // outerHTML swaps replace the target: find its successor by id.
    const id = evt.detail.target && evt.detail.target.id;
    const scope = (id && document.getElementById(id)) || document;
    const marked = scope.querySelector("[data-focus-after-swap]");
    if (marked) { marked.focus(); return; }
    const workspace = scope.matches && scope.matches("[data-focus-first-field]") ? scope : scope.querySelector("[data-focus-first-field]");
    const field = workspace && firstField(workspace);
    if (field) field.focus();
  });
})();
