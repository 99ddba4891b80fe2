// Keyboard shortcuts (listed in the help dialog of workspace.html). Registered in the capture phase so
// Ctrl+Z / Ctrl+S win over the fields' and the canvas's own handling.
import { setTool } from "./canvas.js";
import { $, isTyping } from "./dom.js";
import { finishDraft, renderShapes, startDraft, undoDraftPoint } from "./draw.js";
import { deleteSelected, newRegionFromKeyboard, nudge } from "./editing.js";
import { redo, undo } from "./history.js";
import { ocrKey } from "./ocr.js";
import { bindRegion, newEntity } from "./pass2.js";
import { render } from "./render.js";
import { save } from "./saving.js";
import { stepRegion } from "./selection.js";
import { fit, zoomAt } from "./viewport.js";

// The shape tools' keys (the rectangle is R, select V): listed in the help and on the toolbar buttons.
export const SHAPE_KEYS = { p: "point", l: "line", a: "arrow", y: "polyline", c: "curve", o: "circle", u: "arc", g: "angle" };

export function onKey(ctx, e) {
  const { state, pass, editable } = ctx;
  const { anno, viewport } = ctx.canvas;
  state.keyToken = (state.keyToken || 0) + 1;
  const mod = e.ctrlKey || e.metaKey;
  const k = e.key;
  if (mod && (k === "z" || k === "Z")) { e.preventDefault(); e.stopImmediatePropagation(); if (e.shiftKey) redo(ctx); else undo(ctx); return; }
  if (mod && (k === "y" || k === "Y")) { e.preventDefault(); e.stopImmediatePropagation(); redo(ctx); return; }
  if (mod && (k === "s" || k === "S")) { e.preventDefault(); save(ctx); return; }
  if (k === "Escape") {
    if (isTyping(e)) { e.target.blur(); viewport.focus(); return; }
    if (state.draft && state.draft.points.length) { startDraft(ctx, state.draft.tool); renderShapes(ctx); return; } // the shape being drawn first, then the tool
    if (state.tool !== "select") { setTool(ctx, "select"); if (anno) anno.cancelDrawing(); return; }
    state.selected = null; state.entity = null; if (anno) anno.cancelSelected(); render(ctx); return;
  }
  if (isTyping(e) || mod || e.altKey && !k.startsWith("Arrow")) return;
  if ($("ws-help").open || $("ws-conflict").open) return;
  if (ocrKey(ctx, e)) return; // T steps through OCR suggestions; Enter / Delete decide the active one
  if (state.draft && (k === "Enter" || k === "Backspace")) { e.preventDefault(); if (k === "Enter") finishDraft(ctx); else undoDraftPoint(ctx); return; }
  if (!e.altKey && !e.shiftKey && SHAPE_KEYS[k.toLowerCase()]) { setTool(ctx, SHAPE_KEYS[k.toLowerCase()]); return; }
  const step = e.shiftKey ? 10 : 1;
  const onRegion = state.selected && state.selected.col === "visual_nodes" && pass === 1;
  switch (k) {
    case "?": e.preventDefault(); $("ws-help").showModal(); break;
    case "r": case "R": setTool(ctx, "rect"); break;
    case "v": case "V": setTool(ctx, "select"); break;
    case "n": case "N": e.preventDefault(); newRegionFromKeyboard(ctx); break;
    case "e": case "E": if (editable && (pass === 2 || pass === 3)) { e.preventDefault(); newEntity(ctx); } break;
    case "b": case "B": if (pass === 2 && state.selected && state.selected.col === "visual_nodes" && state.entity) bindRegion(ctx, state.selected.id, state.entity); break;
    case "j": case "J": stepRegion(ctx, 1); break;
    case "k": case "K": stepRegion(ctx, -1); break;
    case "Delete": case "Backspace": if (editable) { e.preventDefault(); deleteSelected(ctx); } break;
    case "Enter": if (state.selected) { const el = document.querySelector("#ws-panel .rec.is-selected .rec__body input, #ws-panel .rec.is-selected .rec__body select"); if (el) { e.preventDefault(); el.focus(); } } break;
    case "+": case "=": zoomAt(ctx, 1.25); break;
    case "-": zoomAt(ctx, 0.8); break;
    case "0": fit(ctx); break;
    case "ArrowLeft": if (onRegion) { e.preventDefault(); nudge(ctx, -step, 0, e.altKey); } break;
    case "ArrowRight": if (onRegion) { e.preventDefault(); nudge(ctx, step, 0, e.altKey); } break;
    case "ArrowUp": if (onRegion) { e.preventDefault(); nudge(ctx, 0, -step, e.altKey); } break;
    case "ArrowDown": if (onRegion) { e.preventDefault(); nudge(ctx, 0, step, e.altKey); } break;
    default: break;
  }
}
