// Shapes on the diagram: points, lines, arrows, polylines, curves, circles, arcs and angle marks drawn in an
// SVG layer over the image (image pixels; the stage's CSS transform zooms and pans it with the image).
// Boxes stay Annotorious's (canvas.js). The layer draws every visual node whose fields make a shape
// (shapes.js), lets the annotator draw new ones with the shape tools, select a shape by clicking it, move it
// by its body and edit it point by point by its handles. Every change is one commit (one undo step), and
// the node's bbox_1000 is derived from its points each time.
import { pointTo1000, pointToPx, radiusTo1000, radiusToPx } from "./coords.js";
import { commit } from "./history.js";
import { nextId } from "./ids.js";
import { currentImage, visualNodes } from "./model.js";
import { regionLook, setTool } from "./canvas.js";
import { select } from "./selection.js";
import { centerOf, derivedBbox, radiusOf, shapeOf, TYPE_OF_SHAPE } from "./shapes.js";

const NS = "http://www.w3.org/2000/svg";
const TAU = 2 * Math.PI;
// Clicks that finish a shape (null: Enter finishes, after at least two points).
export const SHAPE_TOOLS = { point: 1, line: 2, arrow: 2, polyline: null, curve: null, circle: 2, arc: 3, angle: 3 };
const STEPS = {
  point: ["Click the point."],
  line: ["Click one end.", "Click the other end."],
  arrow: ["Click the tail.", "Click the head."],
  polyline: ["Click the first point.", "Click the next point.", "Click more points; Enter finishes, Backspace takes the last one back."],
  curve: ["Click the first point.", "Click the next point on the curve.", "Click more points; Enter finishes, Backspace takes the last one back."],
  circle: ["Click the centre.", "Click a point on the circle."],
  arc: ["Click the centre.", "Click where the arc starts.", "Move along the arc and click where it ends."],
  angle: ["Click the vertex.", "Click the end of the first arm.", "Click the end of the second arm."],
};

function el(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  return e;
}
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);
const tauMod = (a) => ((a % TAU) + TAU) % TAU;
const f = (v) => Math.round(v * 100) / 100;
function sizes(img) {
  const s = Math.min(img.width, img.height);
  return { dot: Math.max(3, s * 0.012), handle: Math.max(4, s * 0.016), head: Math.max(8, s * 0.045) };
}

// --- geometry in pixels -------------------------------------------------------------------------------
// A node as pixel geometry: {shape, points, center, r}.
function pixelGeometry(node, img) {
  const shape = shapeOf(node);
  const g = { shape, points: (node.keypoints_1000 || []).map((p) => pointToPx(p, img.width, img.height)) };
  const c = centerOf(node);
  if (c) { g.center = pointToPx(c, img.width, img.height); g.r = radiusToPx(radiusOf(node) || 0, img.width, img.height); }
  return g;
}
function onCircle(center, r, p) {
  const a = Math.atan2(p[1] - center[1], p[0] - center[0]);
  return [center[0] + r * Math.cos(a), center[1] + r * Math.sin(a)];
}
function catmullRom(pts) {
  let d = `M${f(pts[0][0])} ${f(pts[0][1])}`;
  for (let i = 0; i < pts.length - 1; i += 1) {
    const p0 = pts[i - 1] || pts[i]; const p1 = pts[i]; const p2 = pts[i + 1]; const p3 = pts[i + 2] || p2;
    const c1 = [p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6];
    const c2 = [p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6];
    d += ` C${f(c1[0])} ${f(c1[1])} ${f(c2[0])} ${f(c2[1])} ${f(p2[0])} ${f(p2[1])}`;
  }
  return d;
}
function arcPath(center, r, start, end, clockwiseSweep) {
  const s = onCircle(center, r, start); const e = onCircle(center, r, end);
  return `M${f(s[0])} ${f(s[1])} A${f(r)} ${f(r)} 0 ${clockwiseSweep > Math.PI ? 1 : 0} 1 ${f(e[0])} ${f(e[1])}`;
}
function line(pts) { return pts.map((p, i) => `${i ? "L" : "M"}${f(p[0])} ${f(p[1])}`).join(" "); }
// The paths of a shape: [{d, fill}] (fill: a filled part, e.g. the arrowhead or a point).
function shapePaths(g, img) {
  const { dot, head } = sizes(img);
  const p = g.points;
  switch (g.shape) {
    case "point": return [{ d: `M${f(p[0][0] - dot)} ${f(p[0][1])} a${f(dot)} ${f(dot)} 0 1 0 ${f(2 * dot)} 0 a${f(dot)} ${f(dot)} 0 1 0 ${f(-2 * dot)} 0`, fill: true }];
    case "line": case "polyline": return [{ d: line(p) }];
    case "curve": return [{ d: catmullRom(p) }];
    case "arrow": {
      const [t, hd] = p; const len = dist(t, hd) || 1; const size = Math.min(head, len * 0.45);
      const ux = (hd[0] - t[0]) / len; const uy = (hd[1] - t[1]) / len;
      const bx = hd[0] - ux * size; const by = hd[1] - uy * size; const w = size * 0.45;
      return [{ d: line([t, [bx, by]]) }, { d: `M${f(hd[0])} ${f(hd[1])} L${f(bx - uy * w)} ${f(by + ux * w)} L${f(bx + uy * w)} ${f(by - ux * w)} Z`, fill: true }];
    }
    case "circle": {
      const [cx, cy] = g.center; const r = g.r;
      return [{ d: `M${f(cx - r)} ${f(cy)} A${f(r)} ${f(r)} 0 1 0 ${f(cx + r)} ${f(cy)} A${f(r)} ${f(r)} 0 1 0 ${f(cx - r)} ${f(cy)}` }];
    }
    case "arc": {
      const sweep = tauMod(Math.atan2(p[1][1] - g.center[1], p[1][0] - g.center[0]) - Math.atan2(p[0][1] - g.center[1], p[0][0] - g.center[0]));
      return [{ d: arcPath(g.center, g.r, p[0], p[1], sweep) }];
    }
    case "angle": {
      const [v, a, b] = p; const m = Math.max(3, 0.3 * Math.min(dist(v, a), dist(v, b)));
      const a1 = Math.atan2(a[1] - v[1], a[0] - v[0]); const a2 = Math.atan2(b[1] - v[1], b[0] - v[0]);
      const d = tauMod(a2 - a1); const cw = d <= Math.PI;
      const s = [v[0] + m * Math.cos(a1), v[1] + m * Math.sin(a1)]; const e = [v[0] + m * Math.cos(a2), v[1] + m * Math.sin(a2)];
      return [{ d: line([a, v, b]) }, { d: `M${f(s[0])} ${f(s[1])} A${f(m)} ${f(m)} 0 0 ${cw ? 1 : 0} ${f(e[0])} ${f(e[1])}` }];
    }
    default: return [];
  }
}
// Where the handles of a node sit: [{key, at}] (point-<i>: keypoint i; center; radius: a point on the circle).
function handlesOf(g) {
  const out = g.points.map((at, i) => ({ key: `point-${i}`, at }));
  if (g.shape === "circle" || g.shape === "arc") out.push({ key: "center", at: g.center });
  if (g.shape === "circle") out.push({ key: "radius", at: [g.center[0] + g.r, g.center[1]] });
  return out;
}

// --- the node's fields from pixel geometry -------------------------------------------------------------
// Writes keypoints, centre and radius (0–1000) and the bbox derived from them into `node`.
export function setGeometry(node, img, { points = [], center = null, r = null }) {
  node.keypoints_1000 = points.map((p) => pointTo1000(p[0], p[1], img.width, img.height));
  node.center_1000 = center ? pointTo1000(center[0], center[1], img.width, img.height) : [-1, -1];
  node.radius_1000 = center ? Math.max(1, radiusTo1000(r, img.width, img.height)) : -1;
  node.bbox_1000 = derivedBbox(node, img.width, img.height) || node.bbox_1000;
}
export function rederive(node, img) {
  const box = derivedBbox(node, img.width, img.height);
  if (box) node.bbox_1000 = box;
}

// --- the layer ---------------------------------------------------------------------------------------
export function mountShapes(ctx) {
  const { canvas } = ctx;
  const img = currentImage(ctx);
  if (!img) { canvas.shapes = null; return; }
  const svgEl = el("svg", { class: "ws-shapes", width: img.width, height: img.height, viewBox: `0 0 ${img.width} ${img.height}`, "data-testid": "shape-layer" });
  canvas.stage.append(svgEl);
  canvas.shapes = { svg: svgEl, drag: null };
  svgEl.addEventListener("pointerdown", (e) => onPointerDown(ctx, e));
  svgEl.addEventListener("pointermove", (e) => { const { draft } = ctx.state; if (draft) { draft.hover = toPx(ctx, e); trackSweep(ctx); if (draft.points.length) renderShapes(ctx); } });
  renderShapes(ctx);
}
function toPx(ctx, e) {
  const img = currentImage(ctx);
  const r = ctx.canvas.shapes.svg.getBoundingClientRect();
  const x = ((e.clientX - r.left) * img.width) / r.width; const y = ((e.clientY - r.top) * img.height) / r.height;
  return [Math.min(img.width, Math.max(0, x)), Math.min(img.height, Math.max(0, y))];
}
export function renderShapes(ctx) {
  const layer = ctx.canvas.shapes;
  const img = currentImage(ctx);
  if (!layer || !img) return;
  const { state } = ctx;
  const drag = layer.drag;
  const kids = [];
  const editing = ctx.pass === 1 && ctx.editable;
  for (const stored of visualNodes(ctx)) {
    if (stored.image_id !== img.image_id) continue;
    const node = drag && drag.id === stored.id ? drag.node : stored;
    if (!shapeOf(node)) continue;
    const g = pixelGeometry(node, img);
    const look = regionLook(ctx, node.id);
    const group = el("g", { class: `ws-shape${look.selected ? " is-selected" : ""}${look.dim ? " is-dim" : ""}`, "data-shape-id": node.id, "data-shape": g.shape });
    const paths = shapePaths(g, img);
    for (const p of paths) group.append(el("path", { class: "ws-shape__hit", d: p.d }));
    for (const p of paths) group.append(el("path", { class: `ws-shape__line${p.fill ? " ws-shape__fill" : ""}`, d: p.d, stroke: look.colour, fill: p.fill ? look.colour : "none" }));
    kids.push(group);
    if (look.selected && editing) {
      const { handle } = sizes(img);
      const hg = el("g", { class: "ws-handles", "data-handles-of": node.id });
      for (const hd of handlesOf(g)) hg.append(el("circle", { class: `ws-handle ws-handle--${hd.key === "center" ? "center" : hd.key === "radius" ? "radius" : "point"}`, cx: f(hd.at[0]), cy: f(hd.at[1]), r: f(handle), stroke: look.colour, "data-handle": hd.key }));
      kids.push(hg);
    }
  }
  if (SHAPE_TOOLS[state.tool] !== undefined) {
    kids.push(el("rect", { class: "ws-shapes__catcher", x: 0, y: 0, width: img.width, height: img.height, "data-testid": "shape-catcher" }));
    if (state.draft && state.draft.points.length) kids.push(draftPreview(ctx, img));
  }
  layer.svg.replaceChildren(...kids);
}
// The shape being drawn, up to the pointer.
function draftPreview(ctx, img) {
  const { draft } = ctx.state;
  const pts = [...draft.points, ...(draft.hover ? [draft.hover] : [])];
  const g = el("g", { class: "ws-draft", "data-testid": "shape-draft" });
  const { dot } = sizes(img);
  for (const p of draft.points) g.append(el("circle", { class: "ws-draft__dot", cx: f(p[0]), cy: f(p[1]), r: f(dot) }));
  const geom = draftGeometry(draft.tool, pts, draft.sweep);
  if (geom) for (const p of shapePaths(geom, img)) g.append(el("path", { class: `ws-draft__line${p.fill ? " ws-shape__fill" : ""}`, d: p.d }));
  else if (pts.length >= 2) g.append(el("path", { class: "ws-draft__line", d: line(pts) }));
  return g;
}
// Pixel geometry of the clicks so far, when they already make the tool's shape (for the preview and the end).
function draftGeometry(tool, pts, sweep) {
  if (tool === "point" && pts.length >= 1) return { shape: "point", points: [pts[0]] };
  if ((tool === "line" || tool === "arrow") && pts.length >= 2) return { shape: tool, points: pts.slice(0, 2) };
  if ((tool === "polyline" || tool === "curve") && pts.length >= 2) return { shape: tool, points: pts };
  if (tool === "circle" && pts.length >= 2) return { shape: "circle", points: [], center: pts[0], r: dist(pts[0], pts[1]) };
  if (tool === "arc" && pts.length >= 3) {
    const [c, s, e] = pts; const r = dist(c, s); const end = onCircle(c, r, e);
    return { shape: "arc", center: c, r, points: sweep < 0 ? [end, s] : [s, end] };
  }
  if (tool === "arc" && pts.length === 2) return { shape: "circle", points: [], center: pts[0], r: dist(pts[0], pts[1]) };
  if (tool === "angle" && pts.length >= 3) return { shape: "angle", points: pts.slice(0, 3) };
  return null;
}
// An arc follows the pointer's way round the centre: the signed angle swept since the start point.
function trackSweep(ctx) {
  const { draft } = ctx.state;
  if (!draft || draft.tool !== "arc" || draft.points.length !== 2 || !draft.hover) return;
  const [c] = draft.points;
  const a = Math.atan2(draft.hover[1] - c[1], draft.hover[0] - c[0]);
  if (draft.lastAngle === undefined) draft.lastAngle = Math.atan2(draft.points[1][1] - c[1], draft.points[1][0] - c[0]);
  let d = a - draft.lastAngle;
  if (d > Math.PI) d -= TAU; else if (d <= -Math.PI) d += TAU;
  draft.sweep += d; draft.lastAngle = a;
}

// --- drawing -----------------------------------------------------------------------------------------
export function startDraft(ctx, tool) {
  ctx.state.draft = { tool, points: [], hover: null, sweep: 0 };
  drawStatus(ctx);
}
// What the next click does, under the toolbar (and for screen readers).
export function drawStatus(ctx) {
  const box = document.getElementById("ws-draw-status");
  if (!box) return;
  const { draft } = ctx.state;
  if (!draft) { box.textContent = ""; box.hidden = true; return; }
  const steps = STEPS[draft.tool];
  box.hidden = false;
  box.textContent = `${draft.tool[0].toUpperCase()}${draft.tool.slice(1)}: ${steps[Math.min(draft.points.length, steps.length - 1)]} Esc cancels.`;
}
function addPoint(ctx, p) {
  const { draft } = ctx.state;
  const last = draft.points[draft.points.length - 1];
  if (last && dist(last, p) < 1) return; // a second click on the same pixel adds nothing
  if (draft.tool === "arc" && draft.points.length === 2) {
    draft.hover = p; trackSweep(ctx);
    if (Math.abs(draft.sweep) < 0.02) return; // no arc yet: move along it first
  }
  draft.points.push(p);
  const need = SHAPE_TOOLS[draft.tool];
  if (need !== null && draft.points.length >= need) finishDraft(ctx);
  else { drawStatus(ctx); renderShapes(ctx); }
}
export function undoDraftPoint(ctx) {
  const { draft } = ctx.state;
  if (!draft || !draft.points.length) return false;
  draft.points.pop();
  if (draft.tool === "arc") { draft.sweep = 0; draft.lastAngle = undefined; }
  drawStatus(ctx); renderShapes(ctx);
  return true;
}
// Ends the shape being drawn (Enter for polylines and curves): one new region, selected.
export function finishDraft(ctx) {
  const { draft } = ctx.state;
  const img = currentImage(ctx);
  if (!draft || !img) return false;
  const geom = draftGeometry(draft.tool, draft.points, draft.sweep);
  if (!geom || (geom.r !== undefined && geom.r < 1)) return false;
  const node = { id: "", type: TYPE_OF_SHAPE[draft.tool], subtype: "", text: "", image_id: img.image_id, bbox_1000: [0, 0, 0, 0],
    keypoints_1000: [], center_1000: [-1, -1], radius_1000: -1, confidence: "high" };
  setGeometry(node, img, geom);
  if (!shapeOf(node)) return false; // rounding made two points one: keep drawing
  ctx.state.draft = null;
  let newId = null;
  commit(ctx, (d) => { newId = nextId(ctx, "visual_nodes"); node.id = newId; d.visual_nodes.push(node); });
  setTool(ctx, "select");
  select(ctx, "visual_nodes", newId);
  ctx.canvas.viewport.focus({ preventScroll: true });
  return true;
}

// --- selecting, moving, editing point by point -------------------------------------------------------------
function onPointerDown(ctx, e) {
  if (e.button !== 0) return;
  const { state } = ctx;
  // The canvas takes the keyboard, as a click on a box does: shortcuts (B, Delete, arrows) act on the shape.
  const focusCanvas = () => ctx.canvas.viewport.focus({ preventScroll: true });
  if (SHAPE_TOOLS[state.tool] !== undefined) {
    e.preventDefault(); e.stopPropagation(); focusCanvas();
    if (!state.draft) startDraft(ctx, state.tool);
    addPoint(ctx, toPx(ctx, e));
    return;
  }
  const handle = e.target.closest && e.target.closest(".ws-handle");
  const group = e.target.closest && e.target.closest(".ws-shape");
  const id = handle ? handle.parentNode.getAttribute("data-handles-of") : group && group.getAttribute("data-shape-id");
  if (!id) return;
  e.preventDefault(); e.stopPropagation(); focusCanvas();
  if (!state.selected || state.selected.id !== id) select(ctx, "visual_nodes", id, { fromCanvas: true });
  if (!(ctx.pass === 1 && ctx.editable)) return;
  const node = state.doc.visual_nodes.find((n) => n.id === id);
  if (!node) return;
  startDrag(ctx, node, handle ? handle.getAttribute("data-handle") : "body", toPx(ctx, e));
}
function startDrag(ctx, node, key, from) {
  const layer = ctx.canvas.shapes;
  layer.drag = { id: node.id, key, from, original: structuredClone(node), node: structuredClone(node), moved: false };
  const move = (ev) => {
    const p = toPx(ctx, ev);
    if (!layer.drag.moved && dist(p, from) * ctx.state.zoom < 2) return;
    layer.drag.moved = true;
    layer.drag.node = dragged(ctx, layer.drag, p);
    renderShapes(ctx);
  };
  const up = () => {
    window.removeEventListener("pointermove", move, true);
    window.removeEventListener("pointerup", up, true);
    const done = layer.drag; layer.drag = null;
    if (!done || !done.moved) { renderShapes(ctx); return; }
    commit(ctx, (d) => {
      const n = d.visual_nodes.find((x) => x.id === done.id);
      if (n) for (const k of ["keypoints_1000", "center_1000", "radius_1000", "bbox_1000"]) n[k] = done.node[k];
    });
  };
  window.addEventListener("pointermove", move, true);
  window.addEventListener("pointerup", up, true);
}
// The node as the drag leaves it: the body moves every point; a handle moves its own point.
function dragged(ctx, drag, p) {
  const img = currentImage(ctx);
  const node = structuredClone(drag.original);
  const g = pixelGeometry(node, img);
  if (drag.key === "body") {
    const all = [...g.points, ...(g.center ? [g.center] : [])];
    let dx = p[0] - drag.from[0]; let dy = p[1] - drag.from[1];
    dx = Math.min(img.width - Math.max(...all.map((q) => q[0])), Math.max(-Math.min(...all.map((q) => q[0])), dx));
    dy = Math.min(img.height - Math.max(...all.map((q) => q[1])), Math.max(-Math.min(...all.map((q) => q[1])), dy));
    const shift = (q) => [q[0] + dx, q[1] + dy];
    setGeometry(node, img, { points: g.points.map(shift), center: g.center ? shift(g.center) : null, r: g.r });
  } else if (drag.key === "radius") {
    setGeometry(node, img, { points: [], center: g.center, r: Math.max(1, dist(g.center, p)) });
  } else if (drag.key === "center") {
    if (g.shape === "arc") { // the end points stay; the arc goes through them round the new centre
      const r = Math.max(1, dist(p, g.points[0]));
      setGeometry(node, img, { points: [g.points[0], onCircle(p, r, g.points[1])], center: p, r });
    } else setGeometry(node, img, { points: g.points, center: p, r: g.r });
  } else {
    const i = Number(drag.key.slice("point-".length));
    const points = g.points.map((q, j) => (j === i ? p : q));
    if (g.shape === "arc") { // the dragged end sets the radius; the other end keeps its angle
      const r = Math.max(1, dist(g.center, p));
      setGeometry(node, img, { points: points.map((q) => onCircle(g.center, r, q)), center: g.center, r });
    } else setGeometry(node, img, { points, center: g.center || null, r: g.r });
  }
  return node;
}
// Arrow keys on a selected shape: move every point (clamped to the image), the box follows.
export function nudgeShape(node, img, dx, dy) {
  const all = [...node.keypoints_1000, ...(centerOf(node) ? [node.center_1000] : [])];
  const mx = Math.min(1000 - Math.max(...all.map((q) => q[0])), Math.max(-Math.min(...all.map((q) => q[0])), dx));
  const my = Math.min(1000 - Math.max(...all.map((q) => q[1])), Math.max(-Math.min(...all.map((q) => q[1])), dy));
  node.keypoints_1000 = node.keypoints_1000.map((q) => [q[0] + mx, q[1] + my]);
  if (centerOf(node)) node.center_1000 = [node.center_1000[0] + mx, node.center_1000[1] + my];
  rederive(node, img);
}
