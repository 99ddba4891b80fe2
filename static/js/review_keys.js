// Probe review by clicking and by keyboard (templates/review/probe_blind.html and probe_target.html).
//
// Blind page: every [data-pick="E2"] button (a candidate's view in the answer form, or its box drawn over an
// attachment) writes that candidate into the typed answer field #binding (one candidate replaces it, several
// toggle in a comma-separated list) and shows which are chosen (aria-pressed); typing in the field updates the
// same state, so the typed ID and the clicks always agree. Keys 1–9 choose candidate n of the list.
// Target page: "Tick all six" (c), approve (a), reject (r: asks for the note first when it is empty).
// Both pages: n opens the next probe, ? opens or closes the visible shortcut list. Shortcuts are off while the
// focus is in a field, with a modifier key, and while the image viewer is open.
(function () {
  "use strict";

  const binding = document.getElementById("binding");
  const picks = Array.from(document.querySelectorAll("[data-pick]"));
  const status = document.getElementById("pick-status");

  function chosen() {
    if (!binding) return [];
    return binding.value
      .split(",")
      .map((part) => part.trim().toUpperCase())
      .filter(Boolean);
  }

  function sync() {
    const now = new Set(chosen());
    for (const button of picks) {
      const on = now.has(button.dataset.pick);
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.classList.toggle("is-selected", on);
    }
    if (status) status.textContent = now.size ? `Chosen: ${Array.from(now).join(", ")}` : "Nothing chosen yet.";
  }

  function choose(alias) {
    if (!binding || binding.disabled || binding.closest("fieldset:disabled")) return;
    if (binding.dataset.cardinality === "one") {
      binding.value = alias;
    } else {
      const now = chosen();
      const at = now.indexOf(alias);
      if (at >= 0) now.splice(at, 1);
      else now.push(alias);
      binding.value = now.join(", ");
    }
    binding.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // A box in percent of its view ("left top width height"): placed by script, as the CSP forbids inline styles.
  function place(element) {
    const [left, top, width, height] = element.dataset.box.split(" ").map(Number);
    Object.assign(element.style, { left: `${left}%`, top: `${top}%`, width: `${width}%`, height: `${height}%` });
    element.hidden = false;
  }

  if (binding) {
    document.querySelectorAll("[data-box]").forEach(place);
    document.querySelectorAll("[data-needs-js]").forEach((element) => (element.hidden = false));
    for (const button of picks) button.addEventListener("click", () => choose(button.dataset.pick));
    binding.addEventListener("input", sync);
    sync();
  }

  const confirmAll = document.getElementById("confirm-all");
  const boxes = Array.from(document.querySelectorAll("#decision-form input[type=checkbox][name^=confirm_]"));
  if (confirmAll) {
    confirmAll.hidden = false;
    confirmAll.addEventListener("click", () => {
      for (const box of boxes) box.checked = true;
      say(`All ${boxes.length} confirmations ticked.`);
    });
  }

  function say(text) {
    const line = document.getElementById("decision-status");
    if (line) line.textContent = text;
  }

  function reject() {
    const note = document.getElementById("note");
    if (note && !note.value.trim()) {
      note.focus();
      say("Write the note first (a rejection needs one), then press Reject.");
      return;
    }
    document.getElementById("reject").click();
  }

  function clickIf(id) {
    const element = document.getElementById(id);
    if (!element) return false;
    element.click();
    return true;
  }

  function toggleHelp() {
    const help = document.getElementById("shortcut-help");
    if (!help) return;
    help.open = !help.open;
    help.querySelector("summary").focus();
  }

  function typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  const actions = {
    "?": toggleHelp,
    n: () => clickIf("next-work"),
    c: () => confirmAll && confirmAll.click(),
    a: () => clickIf("approve"),
    r: () => document.getElementById("reject") && reject(),
  };

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (document.querySelector("dialog[open]")) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const pick = /^[1-9]$/.test(key) && document.querySelector(`.candidate-pick[data-index="${key}"]`);
    if (pick) {
      event.preventDefault();
      pick.click();
      return;
    }
    const action = actions[key === "/" && event.shiftKey ? "?" : key];
    if (!action) return;
    event.preventDefault();
    action();
  });
})();
