// The diagram canvas (Annotorious v3): regions drawn from the document, and edits made on the canvas
// turned into commits. The canvas is a rendering of the document, never a second source of truth.
import { bboxFromPixels, kToPx } from "./coords.js";
import { $, h } from "./dom.js";
import { drawStatus, mountShapes, renderShapes, SHAPE_TOOLS, startDraft } from "./draw.js";
import { commit } from "./history.js";
import { nextId } from "./ids.js";
import { currentImage, entityColour, regionOwners, visualNodes } from "./model.js";
import { renderOcr } from "./ocr.js";
import { render } from "./render.js";
import { focusField, select } from "./selection.js";
import { shapeOf } from "./shapes.js";
import { fit } from "./viewport.js";

function toAnnotation(node, img) {
  const [x1, y1, x2, y2] = node.bbox_1000;
  const x = kToPx(x1, img.width); const y = kToPx(y1, img.height);
  const w = kToPx(x2, img.width) - x; const hh = kToPx(y2, img.height) - y;
  return { id: node.id, bodies: [], target: { annotation: node.id, selector: { type: "RECTANGLE", geometry: { x, y, w, h: hh, bounds: { minX: x, minY: y, maxX: x + w, maxY: y + hh } } } } };
}
// How a region looks: its entity's colour, whether it is selected, in the highlighted entity, or dimmed.
export function regionLook(ctx, id, annoSelected = false) {
  const { state } = ctx;
  const owner = regionOwners(ctx).get(id);
  const selected = annoSelected || Boolean(state.selected && state.selected.id === id);
  const inEntity = Boolean(state.entity && owner === state.entity);
  return { colour: owner ? entityColour(ctx, owner) : "#1f5fbf", selected, inEntity, dim: Boolean(state.entity && !inEntity) };
}
function regionStyle(ctx, annotation, annoState) {
  const { colour, selected, inEntity, dim } = regionLook(ctx, annotation.id, Boolean(annoState && annoState.selected));
  return {
    fill: colour,
    fillOpacity: selected ? 0.28 : inEntity ? 0.3 : dim ? 0.04 : 0.12,
    stroke: colour,
    strokeWidth: selected || inEntity ? 3 : 1.5,
    strokeOpacity: dim ? 0.35 : 1,
  };
}
export function mountCanvas(ctx) {
  const canvas = ctx.canvas;
  // One style callback per page (Annotorious calls it per region; syncCanvas hands it back on every sync).
  if (!canvas.style) canvas.style = (annotation, annoState) => regionStyle(ctx, annotation, annoState);
  if (canvas.anno) { canvas.anno.destroy(); canvas.anno = null; }
  canvas.stage.replaceChildren();
  canvas.shown = new Map();
  canvas.shapes = null;
  ctx.state.draft = null;
  const img = currentImage(ctx);
  if (!img) { canvas.stage.append(h("p", { class: "ws-empty", text: "This problem has no diagram." })); return; }
  const imgEl = h("img", { src: img.url, alt: `Diagram ${img.image_id}`, width: img.width, height: img.height, draggable: "false" });
  canvas.stage.append(imgEl);
  const start = () => {
    canvas.anno = window.Annotorious.createImageAnnotator(imgEl, {
      drawingEnabled: false,
      userSelectAction: ctx.pass === 1 && ctx.editable ? "EDIT" : "SELECT",
      style: canvas.style,
    });
    canvas.anno.setDrawingTool("rectangle");
    canvas.anno.on("createAnnotation", (a) => onCreate(ctx, a));
    canvas.anno.on("updateAnnotation", (a) => onUpdate(ctx, a));
    canvas.anno.on("selectionChanged", (list) => onSelection(ctx, list));
    mountShapes(ctx);
    syncCanvas(ctx);
    fit(ctx);
    setTool(ctx, ctx.state.tool);
  };
  if (imgEl.complete) start(); else imgEl.addEventListener("load", start, { once: true });
}
export function syncCanvas(ctx) {
  const { state, canvas } = ctx;
  const { anno, shown } = canvas;
  if (!anno) return;
  const img = currentImage(ctx);
  canvas.syncing = true;
  const want = new Map();
  // Annotorious draws the boxes; a node whose fields make a shape (an arrow, a circle, …) is drawn by draw.js.
  for (const n of visualNodes(ctx)) if (n.image_id === img.image_id && Array.isArray(n.bbox_1000) && n.bbox_1000.length === 4 && !shapeOf(n)) want.set(n.id, n);
  for (const id of [...shown.keys()]) if (!want.has(id)) { anno.removeAnnotation(id); shown.delete(id); }
  for (const [id, n] of want) {
    const key = n.bbox_1000.join(",");
    if (!shown.has(id)) { anno.addAnnotation(toAnnotation(n, img)); shown.set(id, key); }
    else if (shown.get(id) !== key) { anno.updateAnnotation(toAnnotation(n, img)); shown.set(id, key); }
  }
  anno.setStyle(canvas.style);
  const sel = state.selected && want.has(state.selected.id) ? state.selected.id : null;
  const current = (anno.getSelected() || []).map((a) => a.id);
  if (sel && !current.includes(sel) && state.tool !== "rect") anno.setSelected(sel, ctx.pass === 1 && ctx.editable);
  if (!sel && current.length) anno.cancelSelected();
  canvas.syncing = false;
  renderShapes(ctx);
  renderOcr(ctx);
}
function bboxOf(ctx, annotation) {
  const img = currentImage(ctx);
  const g = annotation.target.selector.geometry;
  return bboxFromPixels(g.x, g.y, g.x + g.w, g.y + g.h, img.width, img.height);
}
function onCreate(ctx, annotation) {
  const { canvas } = ctx;
  if (canvas.syncing) return;
  const bbox = bboxOf(ctx, annotation);
  canvas.syncing = true; canvas.anno.removeAnnotation(annotation.id); canvas.syncing = false;
  if (ctx.pass !== 1 || !ctx.editable || bbox[0] === bbox[2] || bbox[1] === bbox[3]) return;
  addRegion(ctx, bbox);
}
export function addRegion(ctx, bbox) {
  const img = currentImage(ctx);
  let newId = null;
  commit(ctx, (d) => {
    newId = nextId(ctx, "visual_nodes");
    d.visual_nodes.push({ id: newId, type: ctx.state.lastType, subtype: "", text: "", image_id: img.image_id, bbox_1000: bbox,
      keypoints_1000: [], center_1000: [-1, -1], radius_1000: -1, confidence: "high" });
  });
  ctx.state.createdAt = Date.now();
  select(ctx, "visual_nodes", newId);
  setTool(ctx, "select");
  focusField(ctx, "text");
}
function onUpdate(ctx, annotation) {
  if (ctx.canvas.syncing || ctx.pass !== 1) return;
  const bbox = bboxOf(ctx, annotation);
  ctx.canvas.shown.set(annotation.id, bbox.join(","));
  commit(ctx, (d) => { const n = d.visual_nodes.find((x) => x.id === annotation.id); if (n) n.bbox_1000 = bbox; }, { coalesce: `move:${annotation.id}` });
}
function onSelection(ctx, list) {
  const { state, canvas } = ctx;
  if (canvas.syncing) return;
  const a = list && list[0];
  // Annotorious selects its own just-drawn shape (a UUID) before or after createAnnotation replaced it
  // with a region: never treat a shape that is not one of our regions as a selection.
  if (a && !canvas.shown.has(a.id)) { setTimeout(() => syncCanvas(ctx), 0); return; }
  if (!a && Date.now() - (state.createdAt || 0) < 500) { setTimeout(() => syncCanvas(ctx), 0); return; } // the drawing's own click
  if (a) { if (!state.selected || state.selected.id !== a.id) select(ctx, "visual_nodes", a.id, { fromCanvas: true }); }
  else if (state.selected && state.selected.col === "visual_nodes") { state.selected = null; render(ctx); }
}
// The canvas tools: select, the rectangle (Annotorious) and the shape tools of draw.js.
export const TOOLS = ["select", "rect", ...Object.keys(SHAPE_TOOLS)];
export function setTool(ctx, tool) {
  const { state, canvas } = ctx;
  const drawing = ctx.pass === 1 && ctx.editable;
  state.tool = TOOLS.includes(tool) && tool !== "select" && drawing ? tool : "select";
  if (SHAPE_TOOLS[state.tool] === undefined) { state.draft = null; drawStatus(ctx); }
  else if (!state.draft || state.draft.tool !== state.tool) startDraft(ctx, state.tool); // says what to click first
  for (const t of TOOLS) { const b = $(`tool-${t}`); if (b) b.setAttribute("aria-pressed", String(state.tool === t)); }
  canvas.viewport.classList.toggle("is-drawing", state.tool !== "select");
  if (canvas.anno) {
    // Annotorious does not start a new shape while one is selected for editing: drop the canvas
    // selection first (the record stays selected in the panel), else the next drag does nothing.
    if (state.tool !== "select" && (canvas.anno.getSelected() || []).length) { canvas.syncing = true; canvas.anno.cancelSelected(); canvas.syncing = false; }
    canvas.anno.setDrawingEnabled(state.tool === "rect");
  }
  renderShapes(ctx);
}
export function setupTools(ctx) {
  for (const t of TOOLS) {
    const b = $(`tool-${t}`);
    if (!b) continue;
    b.addEventListener("click", () => setTool(ctx, t));
    if (t !== "select" && !(ctx.pass === 1 && ctx.editable)) b.disabled = true;
  }
}
