// Every edit is a commit: mutate a copy, normalize it, push the old one on the undo stack, then keep it on
// this device, re-render and schedule a save.
import { normalize } from "./normalize.js";
import { render } from "./render.js";
import { scheduleSave } from "./saving.js";
import { keepLocal } from "./storage.js";

export function commit(ctx, mutate, opts = {}) {
  if (!ctx.editable) return;
  const { state } = ctx;
  const before = JSON.stringify(state.doc);
  const next = structuredClone(state.doc);
  mutate(next);
  normalize(ctx, next);
  const after = JSON.stringify(next);
  if (after === before) { render(ctx); return; }
  const now = Date.now();
  const coalesce = opts.coalesce && opts.coalesce === state.lastCoalesce && now - state.lastCommitAt < 2500;
  if (!coalesce) { state.undo.push(before); if (state.undo.length > 300) state.undo.shift(); }
  state.lastCoalesce = opts.coalesce || null;
  state.lastCommitAt = now;
  state.redo = [];
  state.doc = next;
  changed(ctx);
}
export function undo(ctx) {
  const { state } = ctx;
  if (!state.undo.length) return;
  state.redo.push(JSON.stringify(state.doc));
  state.doc = JSON.parse(state.undo.pop());
  state.lastCoalesce = null;
  changed(ctx);
}
export function redo(ctx) {
  const { state } = ctx;
  if (!state.redo.length) return;
  state.undo.push(JSON.stringify(state.doc));
  state.doc = JSON.parse(state.redo.pop());
  state.lastCoalesce = null;
  changed(ctx);
}
function changed(ctx) {
  ctx.state.dirty = true;
  keepLocal(ctx);
  render(ctx);
  scheduleSave(ctx);
}
