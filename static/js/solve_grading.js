// Expert grading page: add/remove rubric rows, enforce 0 ≤ awarded ≤ maximum, show the normalized credit live,
// keyboard shortcuts (Alt+A add a component, Alt+C toggle "correct", Ctrl+Enter save and go to the next one).
(function () {
  "use strict";
  function init() {
    var form = document.getElementById("grade-form");
    if (!form) { return; }
    var rows = document.getElementById("component-rows");
    var template = document.getElementById("component-template");
    var credit = document.getElementById("live-credit");
    var clientError = document.getElementById("client-error");
    var saveNext = document.getElementById("save-next");

    function number(input) {
      var text = (input.value || "").trim();
      return text === "" ? NaN : Number(text);
    }

    function validate() {
      var sumAwarded = 0, sumMax = 0, problem = "";
      var list = rows.querySelectorAll(".component-row");
      list.forEach(function (row, index) {
        var description = row.querySelector(".component-description");
        var awarded = row.querySelector(".component-awarded");
        var maximum = row.querySelector(".component-maximum");
        var a = number(awarded), w = number(maximum);
        awarded.setCustomValidity("");
        maximum.setCustomValidity("");
        description.setCustomValidity("");
        if (!isNaN(w)) { awarded.max = String(w); }
        if (isNaN(w) || w <= 0) {
          maximum.setCustomValidity("The maximum must be positive.");
          problem = problem || "Component " + (index + 1) + ": the maximum must be positive.";
        }
        if (isNaN(a) || a < 0 || (!isNaN(w) && a > w)) {
          awarded.setCustomValidity("Awarded points must lie between 0 and the maximum.");
          problem = problem || "Component " + (index + 1) + ": awarded points must lie between 0 and the maximum.";
        }
        if (!description.value.trim()) {
          description.setCustomValidity("Describe what this component awards.");
          problem = problem || "Component " + (index + 1) + ": describe what it awards.";
        }
        if (!isNaN(a)) { sumAwarded += a; }
        if (!isNaN(w) && w > 0) { sumMax += w; }
      });
      if (!list.length) { problem = "A grade needs at least one rubric component."; }
      credit.textContent = sumMax > 0 && !problem ? (sumAwarded / sumMax).toFixed(3) : "—";
      credit.dataset.value = sumMax > 0 && !problem ? String(sumAwarded / sumMax) : "";
      return problem;
    }

    function addRow() {
      var fragment = template.content.cloneNode(true);
      rows.appendChild(fragment);
      var added = rows.querySelectorAll(".component-row");
      added[added.length - 1].querySelector(".component-description").focus();
      validate();
    }

    document.getElementById("add-component").addEventListener("click", addRow);
    rows.addEventListener("click", function (event) {
      var button = event.target.closest(".component-remove");
      if (!button) { return; }
      button.closest(".component-row").remove();
      validate();
    });
    rows.addEventListener("input", function () {
      validate();
      clientError.hidden = true;
    });
    form.addEventListener("submit", function (event) {
      var problem = validate();
      if (problem) {
        event.preventDefault();
        clientError.textContent = problem;
        clientError.hidden = false;
        var invalid = form.querySelector(".component-row :invalid");
        if (invalid) { invalid.focus(); }
      }
    });
    document.addEventListener("keydown", function (event) {
      if (event.altKey && (event.key === "a" || event.key === "A")) {
        event.preventDefault();
        addRow();
      } else if (event.altKey && (event.key === "c" || event.key === "C")) {
        event.preventDefault();
        var box = document.getElementById("correct");
        box.checked = !box.checked;
      } else if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        form.requestSubmit(saveNext);
      }
    });
    validate();
    // a fresh rubric starts at its first description; a pre-filled one (rubric reuse) at the first score
    var description = rows.querySelector(".component-description");
    var first = rows.querySelector(".component-awarded");
    if (description && !description.value) { description.focus(); } else if (first && !first.value) { first.focus(); }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
