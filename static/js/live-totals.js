// A stats page's totals while it is open (the link, tag and overview pages): asks the page's
// live URL (data-live-url, the period's start in it) for {"clicks", "bot_clicks", …} every
// second while the tab is visible, and shows each figure in its [data-live] element. A figure
// only ever goes up: the clicks of a period that includes now never fall, and an answer read a
// moment earlier than the last one must not undo it. The clicks carry aria-live="polite", so a
// change is announced without interrupting. After an error it asks again as usual once (one
// restart of the server should not slow the page), then waits twice as long after each further
// one, up to 30 s; the page itself works without any of this. No dependencies.
(function () {
  "use strict";
  var box = document.querySelector("[data-live-url]");
  if (!box || !window.fetch) { return; }
  var url = box.getAttribute("data-live-url");
  var INTERVAL = 1000;
  var MAX_WAIT = 30000;
  var failures = 0;
  var timer = null;
  var busy = false;

  function show(figures) {
    var fields = box.querySelectorAll("[data-live]");
    for (var i = 0; i < fields.length; i++) {
      var value = figures[fields[i].getAttribute("data-live")];
      var shown = parseInt(fields[i].getAttribute("data-live-value") || fields[i].textContent, 10);
      if (typeof value === "number" && !(value <= shown)) {
        fields[i].setAttribute("data-live-value", String(value));
        fields[i].textContent = String(value);
      }
    }
  }

  function schedule(delay) {
    window.clearTimeout(timer);
    timer = window.setTimeout(poll, delay);
  }

  function poll() {
    if (document.visibilityState !== "visible" || busy) { return; }
    busy = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (figures) { show(figures); failures = 0; })
      .catch(function () { failures += 1; })
      .then(function () {
        busy = false;
        schedule(failures < 2 ? INTERVAL : Math.min(INTERVAL * Math.pow(2, failures - 1), MAX_WAIT));
      });
  }

  // A hidden tab asks nothing; back in view, it catches up at once.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { schedule(0); }
  });
  schedule(INTERVAL);
}());
