// Selecting a record (panel, canvas, text or keyboard) and moving the caret into its fields.
import { mountCanvas } from "./canvas.js";
import { visualNodes } from "./model.js";
import { render, renderImageTabs } from "./render.js";

export function select(ctx, col, id, opts = {}) {
  const { state, payload } = ctx;
  state.selected = id ? { col, id } : null;
  if (col === "physical_nodes" || col === "new_or_updated_physical_nodes") state.entity = id;
  render(ctx);
  const el = document.querySelector(`[data-rec="${col}:${id}"]`) || document.querySelector(`[data-rec$=":${id}"]`);
  if (el && !opts.noScroll) el.scrollIntoView({ block: "nearest" });
  if (col === "visual_nodes" && !opts.fromCanvas) {
    const n = visualNodes(ctx).find((x) => x.id === id);
    if (n) { const idx = payload.images.findIndex((i) => i.image_id === n.image_id); if (idx >= 0 && idx !== state.imageIndex) { state.imageIndex = idx; mountCanvas(ctx); renderImageTabs(ctx); } }
  }
}
export function focusField(ctx, name) {
  const { state } = ctx;
  // After the canvas has finished its own pointer handling (it may move focus to the SVG).
  // A key pressed meanwhile (Esc, a shortcut) wins: never pull focus back into a field afterwards.
  const token = state.keyToken;
  // Nor when the user has already moved into another field (a fast click or an automated fill):
  // the late retry would otherwise steal the caret and send their typing to the wrong field.
  const go = () => {
    if (state.keyToken !== token) return;
    const active = document.activeElement;
    if (active && active.matches && active.matches("#ws-panel input, #ws-panel textarea, #ws-panel select")) return;
    const el = document.querySelector(`#ws-panel .rec.is-selected [data-field="${name}"]`) || document.querySelector(`#ws-panel [data-field="${name}"]`); if (el) { el.focus(); if (el.select) el.select(); }
  };
  setTimeout(go, 0);
  setTimeout(go, 120);
}
// J / K: the next or previous region, in document order.
export function stepRegion(ctx, delta) {
  const { state } = ctx;
  const list = visualNodes(ctx);
  if (!list.length) return;
  const i = state.selected && state.selected.col === "visual_nodes" ? list.findIndex((n) => n.id === state.selected.id) : -1;
  const next = list[(i + delta + list.length) % list.length];
  select(ctx, "visual_nodes", next.id);
}
