// Release datasheet charts: Figure 3 (a radar of source problems, localized probes and paired +GT inputs across
// domain groups, percentages within each collection) and Figure 6 (concept families and prominent terms of the
// problem text, by parents). Data: #datasheet-chart-data (probes.datasheet.tables.chart_data).
(function () {
  "use strict";
  var colors = ["#3b6fb6", "#d08a2e", "#4a9a5b", "#8c5bb0", "#b04a4a"];
  function fill(hex) { return hex + "33"; }
  function title(text) { return { display: true, text: text }; }
  function draw(id, config) {
    var canvas = document.getElementById(id);
    if (!canvas) { return; }
    config.options = Object.assign({ animation: false, responsive: true }, config.options);
    canvas.chart = new Chart(canvas, config);
  }
  function init() {
    var node = document.getElementById("datasheet-chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    draw("chart-datasheet-radar", {
      type: "radar",
      data: {
        labels: data.radar.labels,
        datasets: data.radar.series.map(function (s, i) {
          return { label: s.label, data: s.percents, counts: s.counts, borderColor: colors[i],
                   backgroundColor: fill(colors[i]), pointBackgroundColor: colors[i] };
        })
      },
      options: {
        aspectRatio: 2.2,
        plugins: {
          title: title("Share within each collection (%)"),
          legend: { position: "right" },
          tooltip: { callbacks: { label: function (ctx) {
            return ctx.dataset.label + ": " + ctx.raw + "% (" + ctx.dataset.counts[ctx.dataIndex] + ")";
          } } }
        },
        scales: { r: { beginAtZero: true, suggestedMax: 50, ticks: { callback: function (v) { return v + "%"; } } } }
      }
    });
    draw("chart-datasheet-families", {
      type: "bar",
      data: { labels: data.families.labels, datasets: [
        { label: "Parents mentioning the family (%)", data: data.families.shares, counts: data.families.parents,
          backgroundColor: colors[0] }
      ] },
      options: {
        indexAxis: "y",
        aspectRatio: 2.6,
        plugins: {
          title: title("Concept families (share of " + data.parents + " parents)"),
          legend: { display: false },
          tooltip: { callbacks: { label: function (ctx) {
            return ctx.raw + "% (" + ctx.dataset.counts[ctx.dataIndex] + " parents)";
          } } }
        },
        scales: { x: { min: 0, max: 100, title: title("% of parents") } }
      }
    });
    draw("chart-datasheet-terms", {
      type: "bar",
      data: { labels: data.terms.labels, datasets: [
        { label: "Parents mentioning the term", data: data.terms.parents, backgroundColor: colors[1] },
        { label: "Occurrences", data: data.terms.occurrences, backgroundColor: colors[2] }
      ] },
      options: {
        aspectRatio: 3,
        plugins: { title: title("Prominent terms (parents mentioning each, and occurrences)") },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } }
      }
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
