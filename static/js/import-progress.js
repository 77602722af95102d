// The import status page while an upload waits or runs: asks for its progress every 2 s and
// shows it; once the import has finished, says so and offers the report (the page is not
// reloaded under the reader). Without JavaScript the page has a Refresh link. No dependencies.
(function () {
  "use strict";
  var box = document.getElementById("import-progress");
  if (!box || !window.fetch) { return; }
  var url = box.getAttribute("data-progress-url");
  var text = box.querySelector("[data-progress-text]");
  var bar = box.querySelector("progress");
  var done = document.getElementById("import-done");
  var refresh = document.getElementById("import-refresh");
  if (refresh) { refresh.hidden = true; }

  function show(state) {
    if (state.finished || state.interrupted) {
      text.textContent = state.interrupted ? "The import was interrupted."
        : state.status === "failed" ? "The import stopped." : "The import is done.";
      bar.hidden = true;
      done.hidden = false;
      return true;
    }
    if (state.status === "running") {
      text.textContent = "Importing: " + state.rows_done.toLocaleString() + " of "
        + state.rows_total.toLocaleString() + " rows.";
      bar.max = Math.max(state.rows_total, 1);
      bar.value = state.rows_done;
    }
    return false;
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (state) {
        if (!state || !show(state)) { window.setTimeout(poll, 2000); }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
}());
