// A request made by htmx (a form's Submit, a button) that fails without a page to show (a 5xx or
// 4xx answer htmx does not swap in, an outage answered with HX-Reswap: none, a network failure)
// would otherwise leave the page as it was, with nothing said. Say what happened beside the
// element that made the request; what the user typed stays where it is. The message is the
// answer's [data-request-error] text when the server sent one (dynabench/outages.py), else a
// general one. The next request from that element removes it.
(function () {
  "use strict";

  function place(elt) {
    return (elt && elt.closest && elt.closest("form")) || elt;
  }

  function clear(elt) {
    const where = place(elt);
    const old = where && where.querySelector ? where.querySelector(":scope > [data-request-failed]") : null;
    if (old) old.remove();
  }

  function serverMessage(xhr) {
    try {
      const doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      const said = doc.querySelector("[data-request-error]");
      return said ? said.textContent.trim() : "";
    } catch (e) {
      return "";
    }
  }

  function show(elt, message) {
    const where = place(elt);
    if (!where || !where.prepend) return;
    clear(elt);
    const note = document.createElement("p");
    note.className = "error";
    note.setAttribute("role", "alert");
    note.setAttribute("data-request-failed", "");
    note.textContent = message;
    where.prepend(note);
  }

  document.addEventListener("htmx:beforeRequest", function (evt) { clear(evt.detail.elt); });

  document.addEventListener("htmx:afterRequest", function (evt) {
    const xhr = evt.detail.xhr;
    if (!xhr || xhr.status === 0) return;  // no answer: htmx:sendError below (or an abort, which says nothing)
    const keptPage = xhr.getResponseHeader("HX-Reswap") === "none";
    if (xhr.status >= 400 && (evt.detail.failed || keptPage)) {
      show(evt.detail.elt, serverMessage(xhr) || (xhr.status >= 500
        ? "The server failed to answer (HTTP " + xhr.status + "). Nothing on this page was lost: try again in a moment."
        : "The server refused this request (HTTP " + xhr.status + "). Nothing on this page was lost: reload the page and try again."));
    }
  });

  document.addEventListener("htmx:sendError", function (evt) {
    show(evt.detail.elt, "The server could not be reached. Nothing on this page was lost: check your connection and try again.");
  });
})();
