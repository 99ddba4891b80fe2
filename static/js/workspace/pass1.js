// Pass 1 panel: the regions (visual primitives) drawn on the diagram.
import { renderAmbiguities } from "./ambiguities.js";
import { setTool } from "./canvas.js";
import { h, texSpan } from "./dom.js";
import { newRegionFromKeyboard } from "./editing.js";
import { card, fieldInput, fieldSelect, labelled, section } from "./fields.js";
import { currentImage } from "./model.js";

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
        h("div", { class: "ws-row ws-row--bbox" }, ["x1", "y1", "x2", "y2"].map((k, i) => labelled(k, fieldInput(ctx, n, "visual_nodes", `bbox_${k}`, {
          type: "number", cls: "ws-input--num", label: `bbox ${k}`, path: (r, v) => { r.bbox_1000[i] = Math.max(0, Math.min(1000, v)); },
        })))),
      ];
    }));
  });
  const empty = nodes.length ? null : h("p", { class: "ws-empty", text: "No regions yet. Press R and drag on the diagram, or press N to add one with the keyboard." });
  return [
    section("Regions", nodes.length, editable ? h("div", { class: "ws-actions" },
      h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "draw", onclick: () => setTool(ctx, "rect") }, "Draw (R)"),
      h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "new-region", onclick: () => newRegionFromKeyboard(ctx) }, "Add (N)")) : null, empty, list),
    renderAmbiguities(ctx),
  ];
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
