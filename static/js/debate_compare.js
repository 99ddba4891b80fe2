// Comparison chart for solver configurations: accuracy (left axis) beside dollars per problem (right axis).
(function () {
  "use strict";
  function init() {
    var node = document.getElementById("debate-compare-data");
    var canvas = document.getElementById("chart-compare");
    if (!node || !canvas || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    if (!data.labels || !data.labels.length) { return; }
    var chart = new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.labels,
        datasets: [
          { label: "Accuracy", data: data.accuracy, backgroundColor: "#3b6fb6", yAxisID: "y" },
          { label: "SolveAcc", data: data.solve_acc, backgroundColor: "#4a9a5b", yAxisID: "y" },
          { label: "$ per problem", data: data.cost_per_problem, backgroundColor: "#d08a2e", yAxisID: "cost" }
        ]
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          y: { min: 0, max: 1, title: { display: true, text: "accuracy" } },
          cost: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false },
                  title: { display: true, text: "USD per problem" } }
        }
      }
    });
    canvas.dataset.ready = "1";
    window.debateCompareChart = chart;
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
