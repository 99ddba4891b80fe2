/* The assignments page: show only the chosen role's users (the other list is disabled, so it is not sent),
   tick every problem of the page at once, and name on the buttons what they will do ("Assign … to ann1",
   "Spread … evenly across 2 users"). Without JavaScript the form works the same; the server checks roles. */
(function () {
  "use strict";
  var form = document.getElementById("assign-form");
  if (!form) { return; }
  var summary = document.getElementById("assign-summary");

  function role() {
    var checked = form.querySelector("[data-role-radio]:checked");
    return checked ? checked.value : "annotator";
  }

  function activeGroup() {
    return form.querySelector('[data-role-users="' + role() + '"]');
  }

  function chosenUsers() {
    var group = activeGroup();
    if (!group) { return []; }
    var everyone = group.querySelector("[data-everyone]");
    var boxes = group.querySelectorAll("input[name=user]");
    var names = [];
    boxes.forEach(function (box) {
      if ((everyone && everyone.checked) || box.checked) { names.push(box.getAttribute("data-user-name")); }
    });
    return names;
  }

  function tickedCount() {
    return form.querySelectorAll("[data-tick]:checked").length;
  }

  function describe() {
    var names = chosenUsers();
    var ticked = tickedCount();
    form.querySelectorAll("[data-assign-button]").forEach(function (button) {
      if (!button.hasAttribute("data-label")) { button.setAttribute("data-label", button.textContent); }
      var base = button.getAttribute("data-label");
      var what = base.replace(/^Assign /, "");
      if (button.getAttribute("data-scope") === "selected") { what = ticked + " selected"; }
      if (names.length === 1) {
        button.textContent = "Assign " + what + " to " + names[0];
      } else if (names.length > 1) {
        button.textContent = "Spread " + what + " evenly across " + names.length + " users";
      } else {
        button.textContent = base;
      }
    });
    if (summary) {
      summary.textContent = ticked + " ticked · " + (names.length ? "chosen: " + names.join(", ") : "nobody chosen yet");
    }
  }

  function showRole() {
    form.querySelectorAll("[data-role-users]").forEach(function (group) {
      var active = group.getAttribute("data-role-users") === role();
      group.hidden = !active;
      group.style.display = active ? "" : "none"; // .choice-group's display: grid would win over [hidden]
      group.disabled = !active;
    });
    describe();
  }

  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target.hasAttribute("data-tick-all")) {
      form.querySelectorAll("[data-tick]").forEach(function (box) { box.checked = target.checked; });
    }
    if (target.hasAttribute("data-role-radio")) { showRole(); return; }
    describe();
  });
  showRole();
})();
