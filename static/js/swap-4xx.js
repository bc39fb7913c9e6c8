// 4xx answers carry the form with its error message: show them instead of dropping them.
document.body.addEventListener("htmx:beforeSwap", function (evt) {
  if (evt.detail.xhr.status >= 400 && evt.detail.xhr.status < 500) { evt.detail.shouldSwap = true; evt.detail.isError = false; }
});
