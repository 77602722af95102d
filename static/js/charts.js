// Clicks charts by hour, day or week. <canvas data-chart="json-script-id">; data from json_script.
(function () {
  "use strict";
  if (typeof window.Chart === "undefined") { return; }

  function render(canvas) {
    var source = document.getElementById(canvas.getAttribute("data-chart"));
    if (!source) { return; }
    var data = JSON.parse(source.textContent);
    var datasets = [
      { type: "bar", label: "Clicks (people)", data: data.clicks, backgroundColor: "#2456d6", order: 2 }
    ];
    if (data.unique_visitors) {  // each bucket's distinct people (analytics.selectors.series)
      datasets.push({ type: "line", label: "Unique visitors", data: data.unique_visitors,
        borderColor: "#067647", backgroundColor: "#067647",
        pointRadius: data.labels.length > 60 ? 0 : 2, order: 1 });
    }
    if (data.bot_clicks.some(function (v) { return v > 0; })) {
      // Bots and link previews are shown beside people's clicks, never added to them.
      datasets.push({ type: "bar", label: "Bots & previews", data: data.bot_clicks,
        backgroundColor: "#98a2b3", order: 3 });
    }
    new window.Chart(canvas, {
      data: { labels: data.labels, datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 8 } },
          // grace: room above the tallest bar, so it never touches the chart's top edge.
          y: { beginAtZero: true, grace: "10%", ticks: { precision: 0 } }
        },
        plugins: { legend: { position: "bottom" } }
      }
    });
  }

  document.querySelectorAll("canvas[data-chart]").forEach(render);
}());
