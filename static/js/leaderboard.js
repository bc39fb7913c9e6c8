// Leaderboard weight sliders: each range input shows its value in its <output id="o_<input id>">.
document.addEventListener("input", function (evt) {
  const input = evt.target;
  if (!(input instanceof HTMLInputElement) || input.type !== "range" || !input.closest("#weights")) return;
  const output = document.getElementById("o_" + input.id);
  if (output) output.value = input.value;
});
