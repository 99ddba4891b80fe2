/* PhysAlign Studio: small progressive enhancements on top of htmx. No inline handlers (CSP). */
(function () {
  "use strict";

  function showError(text) {
    var box = document.getElementById("messages");
    if (!box) { return; }
    var alert = document.createElement("div");
    alert.className = "alert alert--error";
    alert.setAttribute("role", "alert");
    alert.textContent = text;
    box.replaceChildren(alert);
  }

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail && event.detail.xhr ? event.detail.xhr.status : "";
    showError("The page could not be updated (HTTP " + status + "). Reload the page and try again.");
  });

  document.addEventListener("htmx:sendError", function () {
    showError("The server could not be reached. Check your connection and try again.");
  });

  // Mark the region being refreshed as busy so assistive technology does not read stale rows.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var target = event.detail && event.detail.target;
    if (target) { target.setAttribute("aria-busy", "true"); }
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    if (target) { target.removeAttribute("aria-busy"); }
  });

  // Main menu groups (<details>): one open at a time; Escape or a click elsewhere closes it.
  function menus() { return document.querySelectorAll(".navmenu__details"); }
  document.addEventListener("toggle", function (event) {
    var opened = event.target;
    if (!opened.classList || !opened.classList.contains("navmenu__details") || !opened.open) { return; }
    menus().forEach(function (other) { if (other !== opened) { other.open = false; } });
  }, true);
  document.addEventListener("click", function (event) {
    menus().forEach(function (menu) { if (menu.open && !menu.contains(event.target)) { menu.open = false; } });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    menus().forEach(function (menu) {
      if (menu.open) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    });
  });
})();
