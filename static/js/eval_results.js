// Results charts for an evaluation run: bars with 95% CI whiskers (or missing-data bounds), quadrant stacks.
(function () {
  "use strict";
  function init() {
    var node = document.getElementById("eval-chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    if (!data.models) { return; }
    var colors = ["#3b6fb6", "#d08a2e", "#4a9a5b", "#8c5bb0"];
    var whiskers = {
      id: "ciWhiskers",
      afterDatasetsDraw: function (chart) {
        var ctx = chart.ctx;
        chart.data.datasets.forEach(function (ds, i) {
          var meta = chart.getDatasetMeta(i);
          if (!ds.ci || meta.hidden) { return; }
          meta.data.forEach(function (bar, j) {
            var range = ds.ci[j] || (ds.bounds && ds.bounds[j]);
            if (!range || range[0] === null) { return; }
            var y0 = chart.scales.y.getPixelForValue(range[0]);
            var y1 = chart.scales.y.getPixelForValue(range[1]);
            ctx.save();
            ctx.strokeStyle = "#222";
            ctx.lineWidth = 1.5;
            if (!ds.ci[j]) { ctx.setLineDash([3, 3]); }
            ctx.beginPath();
            ctx.moveTo(bar.x, y0); ctx.lineTo(bar.x, y1);
            ctx.moveTo(bar.x - 4, y0); ctx.lineTo(bar.x + 4, y0);
            ctx.moveTo(bar.x - 4, y1); ctx.lineTo(bar.x + 4, y1);
            ctx.stroke();
            ctx.restore();
          });
        });
      }
    };
    var main = document.getElementById("chart-main");
    if (main) {
      new Chart(main, {
        type: "bar",
        data: {
          labels: data.models,
          datasets: data.series.map(function (s, i) {
            return { label: s.label, data: s.values, ci: s.ci, backgroundColor: colors[i % colors.length],
                     bounds: s.lower.map(function (lo, j) { return [lo, s.upper[j]]; }) };
          })
        },
        options: { animation: false, responsive: true, maintainAspectRatio: false,
                   scales: { y: { min: 0, max: 1, title: { display: true, text: "fraction (95% CI)" } } } },
        plugins: [whiskers]
      });
    }
    var quads = document.getElementById("chart-quadrants");
    if (quads) {
      var box = document.getElementById("chart-quadrants-box");
      if (box) { box.style.height = (80 + 36 * data.models.length) + "px"; }  // one bar per model
      new Chart(quads, {
        type: "bar",
        data: { labels: data.models, datasets: data.quadrants.map(function (q, i) {
          return { label: q.label, data: q.values, backgroundColor: ["#4a9a5b", "#d08a2e", "#3b6fb6", "#b04a4a"][i] };
        }) },
        options: { animation: false, indexAxis: "y", responsive: true, maintainAspectRatio: false,
                   scales: { x: { stacked: true, min: 0, max: 1 }, y: { stacked: true } } }
      });
    }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
