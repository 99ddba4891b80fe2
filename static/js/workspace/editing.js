// Keyboard edits of the selection: nudge or resize a region (a shape moves by its points), add one, delete
// the selected record.
import { hideBanner, showBanner } from "./banner.js";
import { addRegion } from "./canvas.js";
import { bboxFromPixels } from "./coords.js";
import { $, h } from "./dom.js";
import { nudgeShape } from "./draw.js";
import { commit } from "./history.js";
import { currentImage } from "./model.js";
import { removeEntity } from "./pass2.js";
import { render } from "./render.js";
import { shapeOf } from "./shapes.js";

export function nudge(ctx, dx, dy, resize) {
  const { state } = ctx;
  if (ctx.pass !== 1 || !state.selected || state.selected.col !== "visual_nodes") return;
  commit(ctx, (d) => {
    const n = d.visual_nodes.find((x) => x.id === state.selected.id);
    if (!n) return;
    if (shapeOf(n)) { if (!resize) nudgeShape(n, currentImage(ctx), dx, dy); return; } // a shape moves by its points
    const b = [...n.bbox_1000];
    if (resize) { b[2] = Math.min(1000, Math.max(b[0] + 1, b[2] + dx)); b[3] = Math.min(1000, Math.max(b[1] + 1, b[3] + dy)); }
    else {
      const w = b[2] - b[0]; const hh = b[3] - b[1];
      b[0] = Math.min(1000 - w, Math.max(0, b[0] + dx)); b[1] = Math.min(1000 - hh, Math.max(0, b[1] + dy));
      b[2] = b[0] + w; b[3] = b[1] + hh;
    }
    n.bbox_1000 = b;
  }, { coalesce: `nudge:${state.selected.id}:${dx}:${dy}:${resize ? 1 : 0}` });
}
export function newRegionFromKeyboard(ctx) {
  if (ctx.pass !== 1 || !ctx.editable || !currentImage(ctx)) return;
  const { state } = ctx;
  const { viewport } = ctx.canvas;
  const img = currentImage(ctx);
  const cx = (viewport.clientWidth / 2 - state.tx) / state.zoom; const cy = (viewport.clientHeight / 2 - state.ty) / state.zoom;
  const w = Math.max(20, img.width * 0.08); const hh = Math.max(14, img.height * 0.06);
  addRegion(ctx, bboxFromPixels(cx - w / 2, cy - hh / 2, cx + w / 2, cy + hh / 2, img.width, img.height));
}
export function deleteSelected(ctx) {
  const { state } = ctx;
  if (!state.selected) return;
  const { col, id } = state.selected;
  if (ctx.pass === 1 && col === "visual_nodes") removeRecord(ctx, "visual_nodes", id);
  else if (col === "physical_nodes" && ctx.pass === 2) removeEntity(ctx, id);
  else if (state.doc[col]) removeRecord(ctx, col, id);
}
// Deleting a region (Pass 1) or entity (Pass 2) renumbers the ones after it; if a later pass refers to
// the deleted record or to one that would be renumbered, refuse and name the referencing records
// instead of silently leaving dangling references there.
export function blockedByLaterPasses(ctx, col, id) {
  const refs = ctx.payload.later_refs || {};
  if (!Object.keys(refs).length || !["visual_nodes", "physical_nodes"].includes(col)) return false;
  const list = ctx.state.doc[col] || [];
  const at = list.findIndex((r) => r.id === id);
  if (at < 0) return false;
  const hit = list.slice(at).filter((r) => refs[r.id]);
  if (!hit.length) return false;
  const what = hit.map((r) => `${r.id} (used by ${refs[r.id].join(", ")})`).join("; ");
  const renumber = hit.some((r) => r.id !== id) ? ` Deleting ${id} would renumber later ${col === "visual_nodes" ? "regions" : "entities"}.` : "";
  showBanner(`Cannot delete ${id}: later passes refer to it or to records after it.${renumber} Referenced: ${what}. Edit it instead (change its box or type), or remove those references in the later passes first.`, "error");
  const b = $("ws-banner"); b.setAttribute("data-testid", "delete-blocked");
  b.append(h("button", { type: "button", class: "btn btn--small btn--secondary", onclick: () => hideBanner(ctx) }, "Dismiss"));
  return true;
}
export function removeRecord(ctx, col, id) {
  if (blockedByLaterPasses(ctx, col, id)) return;
  commit(ctx, (d) => { d[col] = (d[col] || []).filter((r) => (r.id || r.step_id) !== id); });
  ctx.state.selected = null;
  render(ctx);
}
