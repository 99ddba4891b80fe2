// Annotation analytics charts: active hours per annotator (stacked by pass), submissions and rejections,
// draft and OCR acceptance and edit rates, physics findings per document by source. Data: #analytics-chart-data.
(function () {
  "use strict";
  var colors = ["#3b6fb6", "#d08a2e", "#4a9a5b", "#8c5bb0", "#b04a4a"];
  function bar(id, labels, datasets, options) {
    var canvas = document.getElementById(id);
    if (!canvas) { return; }
    canvas.chart = new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, options)
    });
  }
  function title(text) { return { display: true, text: text }; }
  function init() {
    var node = document.getElementById("analytics-chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    bar("chart-active", data.annotators, data.active_hours.map(function (s, i) {
      return { label: s.label, data: s.values, backgroundColor: colors[i % colors.length] };
    }), { plugins: { title: title("Active hours") },
          scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: title("hours") } } });
    bar("chart-reviews", data.annotators, [
      { label: "Submissions", data: data.submissions, backgroundColor: colors[0] },
      { label: "Rejections", data: data.rejections, backgroundColor: colors[4] }
    ], { plugins: { title: title("Submissions and rejections") },
         scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } });
    bar("chart-rates", data.annotators, data.rates.map(function (s, i) {
      return { label: s.label, data: s.values, backgroundColor: colors[i % colors.length] };
    }), { plugins: { title: title("Acceptance and edit rates") },
          scales: { y: { min: 0, max: 100, title: title("%") } } });
    bar("chart-findings", data.sources, [
      { label: "Findings per checked document", data: data.source_findings, backgroundColor: colors[3] }
    ], { plugins: { title: title("Physics findings per document") }, scales: { y: { beginAtZero: true } } });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
