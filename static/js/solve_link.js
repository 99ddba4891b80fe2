// Table 17 / Figure 5: mean parent-level grounding G of solve-wrong and solve-correct parents, per model.
(function () {
  "use strict";
  function init() {
    var node = document.getElementById("solve-link-data");
    var canvas = document.getElementById("chart-solve-link");
    if (!node || !canvas || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    if (!data.models || !data.models.length) { return; }
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.models,
        datasets: [
          { label: "Ḡ solve-wrong", data: data.g_wrong, backgroundColor: "#b04a4a" },
          { label: "Ḡ solve-correct", data: data.g_correct, backgroundColor: "#4a9a5b" }
        ]
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: { y: { min: 0, max: 1, title: { display: true, text: "mean parent-level G on L (raw)" } } },
        plugins: { tooltip: { callbacks: { footer: function (items) {
          var d = data.delta[items[0].dataIndex];
          return d === null ? "Δsolve n/a" : "Δsolve = " + d.toFixed(3);
        } } } }
      }
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
