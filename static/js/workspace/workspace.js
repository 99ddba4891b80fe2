// PhysAlign annotation workspace (Passes 1–5), the entry module of workspace.html and pass_review.html.
// No inline scripts or styles (CSP): the page data comes from the json_script payload, the DOM is built
// with createElement, styles are classes (and CSSOM for the canvas transform). The pass document is the
// single source of truth; the canvas (Annotorious), the record panels and the text view are renderings
// of it.
//
// This module creates the one context (payload, page facts, editing state; see context.js) and passes
// it to every function that needs it. The other modules only define functions: importing one runs
// nothing, so the modules may import each other's functions freely.
import { showBanner } from "./banner.js";
import { mountCanvas, setupTools } from "./canvas.js";
import { setupComments } from "./comments.js";
import { createContext } from "./context.js";
import { $, h } from "./dom.js";
import { redo, undo } from "./history.js";
import { onKey } from "./keyboard.js";
import { normalize } from "./normalize.js";
import { setupOcr } from "./ocr.js";
import { render, renderHint, renderImageTabs } from "./render.js";
import { save, scheduleSave, showConflict, submit } from "./saving.js";
import { dropLocal, keepLocal, readLocal } from "./storage.js";
import { readSelection } from "./text.js";
import { setupViewport } from "./viewport.js";

// Work kept on this device that the server never confirmed (by this user: the storage key names them). Ask
// first: restore it (save it, or choose if the server moved on meanwhile), or discard it.
function restoreLocal(ctx) {
  const { state } = ctx;
  const saved = readLocal(ctx);
  if (!saved || !ctx.editable || JSON.stringify(saved.doc) === JSON.stringify(state.doc)) { if (saved) dropLocal(ctx); return; }
  const when = saved.at ? new Date(saved.at).toLocaleString() : "an earlier visit";
  const restore = h("button", { type: "button", class: "btn btn--primary", text: "Restore my changes", "data-testid": "restore-yes" });
  const discard = h("button", { type: "button", class: "btn btn--secondary", text: "Discard them", "data-testid": "restore-no" });
  const dlg = h("dialog", { class: "ws-dialog", id: "ws-restore", "aria-labelledby": "ws-restore-title" }, [
    h("h2", { id: "ws-restore-title", text: "Unsaved changes on this device" }),
    h("p", { text: `You (${ctx.payload.user.username}) have changes from ${when} that never reached the server ` +
                   `(they start from version ${saved.baseVersion}). Restore them?` }),
    h("div", { class: "ws-dialog__actions" }, [discard, restore]),
  ]);
  document.body.append(dlg);
  restore.onclick = () => {
    dlg.close(); dlg.remove();
    state.undo.push(JSON.stringify(state.doc));
    state.doc = saved.doc;
    state.dirty = true;
    if (saved.baseVersion === state.version) {
      showBanner("Restored your changes from this device; saving them now.", "ok");
      scheduleSave(ctx, 300);
    } else {
      showConflict(ctx);
    }
    render(ctx);
  };
  discard.onclick = () => { dlg.close(); dlg.remove(); dropLocal(ctx); showBanner("Discarded the changes kept on this device.", "ok"); };
  dlg.showModal();
  restore.focus();
}

function start() {
  const ctx = createContext(JSON.parse($("ws-payload").textContent));
  const { state, payload, pass, editable } = ctx;
  if (pass === 4 && !payload.state.exists && editable) state.doc = structuredClone(payload.consolidated);
  if (pass !== 4 || payload.state.exists) normalize(ctx, state.doc);
  // Opening a page never writes: a Pass 4 consolidated from Passes 1–3 is shown, and stored on the first edit.
  window.addEventListener("keydown", (e) => onKey(ctx, e), true);
  document.addEventListener("mouseup", () => setTimeout(() => readSelection(ctx), 0));
  document.addEventListener("keyup", (e) => { if (e.shiftKey) readSelection(ctx); });
  $("ws-undo").addEventListener("click", () => undo(ctx));
  $("ws-redo").addEventListener("click", () => redo(ctx));
  $("ws-submit").addEventListener("click", () => submit(ctx));
  if ($("ws-submit-next")) $("ws-submit-next").addEventListener("click", () => submit(ctx, { thenNext: true }));
  $("ws-help-open").addEventListener("click", () => $("ws-help").showModal());
  $("ws-help-close").addEventListener("click", () => $("ws-help").close());
  window.addEventListener("beforeunload", (e) => { if (state.dirty) { keepLocal(ctx); e.preventDefault(); } });
  window.addEventListener("online", () => { if (state.dirty) save(ctx); });
  setupTools(ctx);
  setupViewport(ctx);
  setupComments(ctx);
  setupOcr(ctx);
  renderImageTabs(ctx);
  renderHint(ctx);
  restoreLocal(ctx);
  render(ctx);
  const boot = () => { mountCanvas(ctx); };
  if (window.Annotorious) boot(); else window.addEventListener("load", boot, { once: true });
  document.documentElement.setAttribute("data-ws-ready", "1");
  // A read-only handle for browser tests and the console (tests read __ws.S.doc); nothing reads it.
  window.__ws = { S: state, save: () => save(ctx), undo: () => undo(ctx), redo: () => redo(ctx) };
}

start();
