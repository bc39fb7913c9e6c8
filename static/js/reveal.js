// Click-to-reveal for images that may be harmful (a task with a content warning): the image is
// drawn blurred by CSS (.blurred) until the person presses its "Show image" button. Without
// JavaScript it stays blurred. Delegated on document, so htmx-swapped content works too.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-reveal]");
    if (!button) return;
    const holder = button.closest("[data-blurred]");
    if (!holder) return;
    event.preventDefault();
    holder.classList.remove("blurred");
    holder.removeAttribute("data-blurred");
    holder.dataset.revealed = "";
    button.remove();
  });
  // A blurred image's link would open it unblurred: it opens only once revealed.
  document.addEventListener("click", function (event) {
    const link = event.target.closest("[data-blurred] a");
    if (link) event.preventDefault();
  }, true);
})();
