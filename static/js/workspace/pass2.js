// Pass 2 panel: physical entities and the regions bound to them (labels / represents / same entity).
import { renderAmbiguities } from "./ambiguities.js";
import { h, pad, texSpan } from "./dom.js";
import { blockedByLaterPasses } from "./editing.js";
import { card, fieldInput, fieldSelect, labelled, section } from "./fields.js";
import { commit } from "./history.js";
import { nextId, renumber } from "./ids.js";
import { entities, entityColour, label, labelNode, regionOwners, visualNodes } from "./model.js";
import { render } from "./render.js";
import { focusField, select } from "./selection.js";

// E: a new entity (Pass 2, or Pass 3's new_or_updated_physical_nodes); in Pass 2 it is bound to the
// selected region, if any.
export function newEntity(ctx) {
  const { state, pass } = ctx;
  const prefix = ctx.idPrefix.physical;
  let pid = null;
  const col = pass === 3 ? "new_or_updated_physical_nodes" : "physical_nodes";
  commit(ctx, (d) => {
    const all = pass === 3 ? entities(ctx) : d.physical_nodes;
    pid = pad(prefix, all.reduce((m, n) => Math.max(m, parseInt(n.id.slice(prefix.length), 10) || 0), 0) + 1);
    const node = { id: pid, type: "body", subtype: "", name: "", symbol: "", visual_anchor_ids: [], text_mention_ids: [], provenance: pass === 3 ? ["TEXT"] : ["IMAGE"], confidence: "high" };
    d[col].push(node);
    if (pass === 2 && state.selected && state.selected.col === "visual_nodes") {
      const v = visualNodes(ctx).find((x) => x.id === state.selected.id);
      d.bindings.push({ id: nextId(ctx, "bindings"), type: v && v.type === "text_glyph" ? "labels" : "represents", from_id: state.selected.id, to_id: pid, provenance: ["IMAGE"], evidence_visual_ids: [state.selected.id], evidence_mention_ids: [] });
    }
  });
  select(ctx, col, pid);
  focusField(ctx, "name");
}
export function removeEntity(ctx, pid) {
  if (blockedByLaterPasses(ctx, "physical_nodes", pid)) return;
  commit(ctx, (d) => {
    d.physical_nodes = d.physical_nodes.filter((n) => n.id !== pid);
    d.bindings = d.bindings.filter((b) => b.to_id !== pid && b.from_id !== pid);
    renumber(ctx, d, "physical_nodes");
  });
  ctx.state.selected = null; ctx.state.entity = null; render(ctx);
}
export function bindRegion(ctx, vid, pid, type) {
  if (!vid || !pid) return;
  const v = visualNodes(ctx).find((x) => x.id === vid);
  const t = type || (v && v.type === "text_glyph" ? "labels" : "represents");
  commit(ctx, (d) => {
    d.bindings = d.bindings.filter((b) => !(b.from_id === vid && (b.type === "labels" || b.type === "represents")));
    d.bindings.push({ id: nextId(ctx, "bindings"), type: t, from_id: vid, to_id: pid, provenance: ["IMAGE"], evidence_visual_ids: [vid], evidence_mention_ids: [] });
  });
}
function selectedRegionBox(ctx, nodes, regions, owners) {
  const { state, editable } = ctx;
  const selRegion = state.selected && state.selected.col === "visual_nodes" ? regions.find((v) => v.id === state.selected.id) : null;
  return selRegion ? h("div", { class: "ws-callout", "data-testid": "selected-region" },
    h("strong", {}, labelNode(ctx, selRegion)),
    owners.get(selRegion.id) ? h("span", { text: ` → ${label(ctx, nodes.find((n) => n.id === owners.get(selRegion.id)))}` }) : h("span", { class: "muted", text: " · not bound yet" }),
    editable && state.entity && owners.get(selRegion.id) !== state.entity ? h("button", { type: "button", class: "btn btn--primary btn--small", "data-action": "bind", onclick: () => bindRegion(ctx, selRegion.id, state.entity) }, `Bind to ${state.entity} (B)`) : null,
    editable ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-entity-from-region", onclick: () => newEntity(ctx) }, "New entity from this region") : null) : null;
}
function entityBody(ctx, n, nodes, regions, owners) {
  const { state, payload, editable } = ctx;
  const bound = state.doc.bindings.filter((b) => b.to_id === n.id && b.type !== "same_entity_as");
  const same = state.doc.bindings.filter((b) => b.type === "same_entity_as" && (b.from_id === n.id || b.to_id === n.id));
  return [
    h("div", { class: "ws-row" }, labelled("Name", fieldInput(ctx, n, "physical_nodes", "name", { placeholder: "e.g. force F1" })), labelled("Symbol", fieldInput(ctx, n, "physical_nodes", "symbol", { placeholder: "e.g. F_1" }))),
    h("div", { class: "ws-row" }, labelled("Physical type", fieldSelect(ctx, n, "physical_nodes", "type", payload.vocab.physical_types)), labelled("Subtype", fieldInput(ctx, n, "physical_nodes", "subtype")), labelled("Confidence", fieldSelect(ctx, n, "physical_nodes", "confidence", payload.vocab.confidence))),
    h("div", { class: "ws-sub" }, h("h3", { text: "Regions" }),
      bound.length ? h("ul", { class: "ws-bindlist" }, bound.map((b) => h("li", {},
        h("button", { type: "button", class: "linkish", onclick: () => select(ctx, "visual_nodes", b.from_id) }, labelNode(ctx, regions.find((v) => v.id === b.from_id)) || b.from_id),
        fieldSelect(ctx, b, "bindings", "type", ["labels", "represents"], { label: `binding type for ${b.from_id}` }),
        editable ? h("button", { type: "button", class: "chip__x", "aria-label": `Unbind ${b.from_id}`, onclick: () => commit(ctx, (d) => { d.bindings = d.bindings.filter((x) => x.id !== b.id); }) }, "×") : null))) : h("p", { class: "muted", text: "Select a region on the diagram, then press B or use “Bind”." }),
      editable ? (() => {
        const add = h("select", { class: "ws-input ws-input--add", "aria-label": "Bind a region", "data-field": "bind-region" }, h("option", { value: "" }, "+ bind a region…"),
          regions.filter((v) => owners.get(v.id) !== n.id).map((v) => h("option", { value: v.id }, label(ctx, v))));
        add.addEventListener("change", () => bindRegion(ctx, add.value, n.id));
        return add;
      })() : null),
    h("div", { class: "ws-sub" }, h("h3", { text: "Same entity as" }),
      same.length ? h("ul", { class: "ws-bindlist" }, same.map((b) => h("li", {}, `${b.from_id} ≡ ${b.to_id}`, editable ? h("button", { type: "button", class: "chip__x", "aria-label": "Remove identity", onclick: () => commit(ctx, (d) => { d.bindings = d.bindings.filter((x) => x.id !== b.id); }) }, "×") : null))) : null,
      editable ? (() => {
        const add = h("select", { class: "ws-input ws-input--add", "aria-label": "Merge identity with", "data-field": "same-as" }, h("option", { value: "" }, "+ same entity as…"),
          nodes.filter((o) => o.id !== n.id).map((o) => h("option", { value: o.id }, label(ctx, o))));
        add.addEventListener("change", () => { const other = add.value; if (other) commit(ctx, (d) => { d.bindings.push({ id: nextId(ctx, "bindings"), type: "same_entity_as", from_id: n.id, to_id: other, provenance: ["IMAGE"], evidence_visual_ids: [], evidence_mention_ids: [] }); }); });
        return add;
      })() : null),
  ];
}
export function renderPass2(ctx) {
  const { state, editable } = ctx;
  const nodes = state.doc.physical_nodes;
  const regions = visualNodes(ctx);
  const owners = regionOwners(ctx);
  const list = h("div", { class: "rec-list", "data-testid": "entity-list" });
  nodes.forEach((n, idx) => {
    const bound = state.doc.bindings.filter((b) => b.to_id === n.id && b.type !== "same_entity_as");
    list.append(card(ctx, "physical_nodes", n, idx, [`${n.id} · ${n.name || "(unnamed)"}`, n.symbol ? " · " : null, n.symbol ? texSpan(n.symbol) : null, ` · ${n.type} · ${bound.length} region${bound.length === 1 ? "" : "s"}`],
      () => entityBody(ctx, n, nodes, regions, owners), { dot: entityColour(ctx, n.id), onRemove: () => removeEntity(ctx, n.id) }));
  });
  return [
    selectedRegionBox(ctx, nodes, regions, owners),
    section("Entities", nodes.length, editable ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-entity", onclick: () => newEntity(ctx) }, "New entity (E)") : null,
      nodes.length ? null : h("p", { class: "ws-empty", text: "Create the physical entities (bodies, forces, pivots…), then bind the regions that label or depict them." }), list),
    section("Unbound regions", regions.filter((v) => !owners.has(v.id)).length, null,
      h("div", { class: "ws-chips" }, regions.filter((v) => !owners.has(v.id)).map((v) => h("button", { type: "button", class: "chip chip--btn", onclick: () => select(ctx, "visual_nodes", v.id) }, labelNode(ctx, v))))),
    renderAmbiguities(ctx),
  ];
}
