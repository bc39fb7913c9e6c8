// 4xx answers carry the form with its error message: show them instead of dropping them.
document.body.addEventListener("htmx:beforeSwap", function (evt) {
  if (evt.detail.xhr.status >= 400 && evt.detail.xhr.status < 500) { evt.detail.shouldSwap = true; evt.detail.isError = false; }
  // A form marked data-swap-server-errors also shows a 5xx page (e.g. the image generator failed: the reason, the prompt kept).
  const from = evt.detail.requestConfig && evt.detail.requestConfig.elt;
  if (evt.detail.xhr.status >= 500 && from && from.closest && from.closest("[data-swap-server-errors]")) {
    evt.detail.shouldSwap = true; evt.detail.isError = false;
  }
});
