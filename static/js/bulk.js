// My links' bulk bar: a select-all box and a count of the ticked rows. Without it the row boxes
// and the bar's form work all the same (their form="bulk-form"). No dependencies.
(function () {
  "use strict";
  var all = document.getElementById("bulk-all");
  var count = document.getElementById("bulk-count");
  var picks = Array.prototype.slice.call(document.querySelectorAll("input.bulk-pick"));
  if (!all || !picks.length) { return; }

  function update() {
    var ticked = picks.filter(function (box) { return box.checked; }).length;
    all.checked = ticked === picks.length;
    all.indeterminate = ticked > 0 && ticked < picks.length;
    if (count) { count.textContent = ticked ? ticked + " selected" : ""; }
  }

  var label = document.getElementById("bulk-all-label");
  if (label) { label.hidden = false; }
  all.addEventListener("change", function () {
    picks.forEach(function (box) { box.checked = all.checked; });
    update();
  });
  picks.forEach(function (box) { box.addEventListener("change", update); });
  update();
})();
