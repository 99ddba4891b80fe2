// Pass 1 panel: the regions (visual primitives) drawn on the diagram.
import { renderAmbiguities } from "./ambiguities.js";
import { setTool } from "./canvas.js";
import { h, texSpan } from "./dom.js";
import { newRegionFromKeyboard } from "./editing.js";
import { rederive } from "./draw.js";
import { card, fieldInput, fieldSelect, labelled, section } from "./fields.js";
import { commit } from "./history.js";
import { currentImage } from "./model.js";
import { shapeOf } from "./shapes.js";

export function renderPass1(ctx) {
  const { state, payload, editable } = ctx;
  const nodes = state.doc.visual_nodes;
  const img = currentImage(ctx);
  const list = h("div", { class: "rec-list", "data-testid": "region-list" });
  nodes.forEach((n, idx) => {
    const title = [`${n.id} · ${n.type}`, n.text ? " · " : null, n.text ? texSpan(n.text) : null, img && n.image_id !== img.image_id ? ` (${n.image_id})` : null];
    list.append(card(ctx, "visual_nodes", n, idx, title, () => {
      // typeset as the region list shows it: TeX ("F_1", "30^\circ") as math, plain text ("Path 1") as it is
      const preview = h("span", { class: "ws-latex" }, texSpan(n.text));
      return [
        h("div", { class: "ws-row" },
          labelled("Visual type", fieldSelect(ctx, n, "visual_nodes", "type", payload.vocab.visual_types, { after: (d, r, v) => { state.lastType = v; } })),
          labelled("Subtype", fieldInput(ctx, n, "visual_nodes", "subtype", { placeholder: "optional" }))),
        labelled("Exact visible text", fieldInput(ctx, n, "visual_nodes", "text", { placeholder: n.type === "text_glyph" ? "e.g. F_1 or 30^\\circ" : "" }), h("span", { class: "ws-preview" }, "Preview: ", preview)),
        h("div", { class: "ws-row" },
          labelled("Confidence", fieldSelect(ctx, n, "visual_nodes", "confidence", payload.vocab.confidence)),
          labelled("Image", fieldSelect(ctx, n, "visual_nodes", "image_id", payload.images.map((i) => i.image_id)))),
        shapeOf(n) ? shapeFields(ctx, n) : h("div", { class: "ws-row ws-row--bbox" }, ["x1", "y1", "x2", "y2"].map((k, i) => labelled(k, fieldInput(ctx, n, "visual_nodes", `bbox_${k}`, {
          type: "number", cls: "ws-input--num", label: `bbox ${k}`, path: (r, v) => { r.bbox_1000[i] = Math.max(0, Math.min(1000, v)); },
        })))),
        editable && hasShapeFields(n) ? h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "keep-box", title: "Clear the keypoints, centre and radius; the box stays",
          onclick: () => commit(ctx, (d) => { const r = d.visual_nodes.find((x) => x.id === n.id); if (r) { r.keypoints_1000 = []; r.center_1000 = [-1, -1]; r.radius_1000 = -1; } }) }, "Keep only the box") : null,
      ];
    }));
  });
  const empty = nodes.length ? null : h("p", { class: "ws-empty", text: "No regions yet. Press R and drag on the diagram, or press N to add one with the keyboard; the toolbar's shape tools draw points, lines, arrows, curves, circles, arcs and angle marks." });
  return [
    section("Regions", nodes.length, editable ? h("div", { class: "ws-actions" },
      h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "draw", onclick: () => setTool(ctx, "rect") }, "Draw (R)"),
      h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "new-region", onclick: () => newRegionFromKeyboard(ctx) }, "Add (N)")) : null, empty, list),
    renderAmbiguities(ctx),
  ];
}
const POINT_NAMES = { arrow: ["Tail", "Head"], line: ["End 1", "End 2"], arc: ["Start", "End"], angle: ["Vertex", "Arm 1 end", "Arm 2 end"], point: ["Point"] };
const SHAPE_NOTES = {
  point: "a point", line: "a line: two ends", arrow: "an arrow: tail → head", polyline: "a polyline: its points in order",
  curve: "a curve through its points", circle: "a circle: centre and radius", arc: "an arc, clockwise from its start to its end",
  angle: "an angle mark: vertex and two arms",
};
function hasShapeFields(n) {
  return (Array.isArray(n.keypoints_1000) && n.keypoints_1000.length > 0) || (Array.isArray(n.center_1000) && n.center_1000.some((v) => v !== -1)) || n.radius_1000 !== -1;
}
// One number of a shape (a keypoint's x or y, the centre's, the radius): editing it re-derives the box.
function shapeNumber(ctx, n, key, label, value, set) {
  const id = `f-visual_nodes-${n.id}-${key}`;
  const input = h("input", { id, class: "ws-input ws-input--num", type: "number", min: 0, max: 1000, value, "data-field": key, "data-k": id, disabled: !ctx.editable, "aria-label": label });
  input.addEventListener("input", () => {
    const v = parseInt(input.value, 10);
    if (Number.isNaN(v)) return;
    commit(ctx, (d) => {
      const r = d.visual_nodes.find((x) => x.id === n.id);
      const img = r && ctx.payload.images.find((i) => i.image_id === r.image_id);
      if (!img) return;
      set(r, Math.max(key === "radius" ? 1 : 0, Math.min(1000, v)));
      if (shapeOf(r)) rederive(r, img);
    }, { coalesce: id });
  });
  return labelled(label, input);
}
// The shape's points, centre and radius as numbers (0–1000), and the box derived from them.
function shapeFields(ctx, n) {
  const shape = shapeOf(n);
  const names = POINT_NAMES[shape] || [];
  const rows = n.keypoints_1000.map((p, i) => h("div", { class: "ws-row ws-row--point", "data-point": String(i) },
    h("span", { class: "ws-point-name", text: names[i] || `Point ${i + 1}` }),
    shapeNumber(ctx, n, `kp_${i}_x`, "x", p[0], (r, v) => { r.keypoints_1000[i][0] = v; }),
    shapeNumber(ctx, n, `kp_${i}_y`, "y", p[1], (r, v) => { r.keypoints_1000[i][1] = v; })));
  if (shape === "circle" || shape === "arc") {
    rows.push(h("div", { class: "ws-row ws-row--point" }, h("span", { class: "ws-point-name", text: "Centre" }),
      shapeNumber(ctx, n, "center_x", "x", n.center_1000[0], (r, v) => { r.center_1000[0] = v; }),
      shapeNumber(ctx, n, "center_y", "y", n.center_1000[1], (r, v) => { r.center_1000[1] = v; }),
      shapeNumber(ctx, n, "radius", "radius", n.radius_1000, (r, v) => { r.radius_1000 = v; })));
  }
  return h("div", { class: "ws-shape-fields", "data-testid": "shape-fields" },
    h("p", { class: "ws-shape-note" }, `Drawn as ${SHAPE_NOTES[shape]}.${ctx.editable ? " Drag a handle on the diagram to move one point, the shape to move it all." : ""}`),
    ...rows,
    h("p", { class: "ws-shape-box", "data-testid": "shape-bbox" }, `Box (from the points): ${n.bbox_1000.join(", ")}`));
}
// The bbox number inputs show the stored box (the generic builder has no key for one array element).
export function fixBboxInputs(ctx, root) {
  for (const input of root.querySelectorAll("input[data-field^='bbox_']")) {
    const id = input.closest("[data-rec]").getAttribute("data-rec").split(":")[1];
    const n = ctx.state.doc.visual_nodes.find((x) => x.id === id);
    const k = ["x1", "y1", "x2", "y2"].indexOf(input.getAttribute("data-field").slice(5));
    if (n && k >= 0) { input.value = n.bbox_1000[k]; input.min = 0; input.max = 1000; }
  }
}
