// Pass 4 panel: the consolidated observed graph (G_obs), its relations and the domain.
import { renderAmbiguities } from "./ambiguities.js";
import { h, ids } from "./dom.js";
import { card, fieldInput, fieldSelect, idChips, labelled, section } from "./fields.js";
import { commit } from "./history.js";
import { nextId } from "./ids.js";
import { entities, entityColour, label, mentions, visualNodes } from "./model.js";
import { render } from "./render.js";
import { save } from "./saving.js";
import { focusField, select } from "./selection.js";

// The parts of Pass 4 rebuilt from Passes 1–3 (relations, ambiguities and the domain are kept).
const CONSOLIDATED_KEYS = ["visual_nodes", "physical_nodes", "text_mentions", "quantities", "bindings", "constraints", "query_target"];

// Saved at once, not after the autosave's pause: the issue list comes back from that save, so it shows the
// rebuilt document's issues as soon as the rebuild is stored.
function consolidate(ctx) {
  commit(ctx, (d) => {
    const c = structuredClone(ctx.payload.consolidated);
    for (const k of CONSOLIDATED_KEYS) d[k] = c[k];
    if (!d.domain) d.domain = c.domain;
  });
  if (ctx.state.dirty) save(ctx);
}
// Pass 4's domain is the Kit's field (mechanics, electromagnetism, mixed); the problem keeps its own domain
// (e.g. optics), shown here with the Kit domain it is exported as. See KIT_DOMAIN_FOR in annotation/workspace.py.
function domainOptions(ctx) {
  const { domain: own, kit_domain: kit } = ctx.payload.problem;
  return [["", "— choose the Kit domain —"], ...ctx.payload.vocab.domains.map((d) => [d, own && own !== d && kit === d ? `${d} (this problem: ${own})` : d])];
}
function domainNote(ctx) {
  const { domain: own, kit_domain: kit } = ctx.payload.problem;
  const kitList = ctx.payload.vocab.domains.join(", ");
  let text;
  if (!own) text = `This problem has no domain of its own: choose the Kit domain (${kitList}).`;
  else if (ctx.payload.vocab.domains.includes(own)) text = `This problem's domain: ${own}.`;
  else if (kit) text = `This problem's domain is ${own}, which the Kit does not list (its Pass 4 knows only ${kitList}): it is exported as ${kit}. The problem keeps ${own} as its own domain.`;
  else text = `This problem's domain is ${own}, which the Kit does not list (its Pass 4 knows only ${kitList}) and which has no usual Kit equivalent: choose the one it is exported as. The problem keeps ${own} as its own domain.`;
  const differs = kit && ctx.state.doc.domain && ctx.state.doc.domain !== kit;
  return h("p", { class: `ws-domain-note${!ctx.state.doc.domain ? " ws-domain-note--warn" : ""}`, "data-testid": "domain-note", text: differs ? `${text} This Pass 4 says ${ctx.state.doc.domain}.` : text });
}
function newRelation(ctx) {
  const { state } = ctx;
  commit(ctx, (d) => { d.relations.push({ id: nextId(ctx, "relations"), predicate: "", subject_id: state.entity || "", object_id: "", quantity_id: "", provenance: [], evidence_visual_ids: state.selected && state.selected.col === "visual_nodes" ? [state.selected.id] : [], evidence_mention_ids: [], confidence: "high" }); });
  select(ctx, "relations", state.doc.relations[state.doc.relations.length - 1].id);
  focusField(ctx, "predicate");
}
function relationCards(ctx, ents, regions, ms, qs) {
  const { state, payload } = ctx;
  const rList = h("div", { class: "rec-list", "data-testid": "relation-list" });
  (state.doc.relations || []).forEach((r, idx) => {
    rList.append(card(ctx, "relations", r, idx, `${r.id} · ${r.subject_id || "?"} ${r.predicate || "?"} ${r.object_id || "?"}${r.quantity_id ? ` (${r.quantity_id})` : ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Subject", fieldSelect(ctx, r, "relations", "subject_id", [["", "—"], ...ents.map((n) => [n.id, label(ctx, n)])])),
        labelled("Predicate", fieldInput(ctx, r, "relations", "predicate", { list: "ws-predicates", placeholder: ctx.relationPredicates[0] })),
        labelled("Object", fieldSelect(ctx, r, "relations", "object_id", [["", "—"], ...ents.map((n) => [n.id, label(ctx, n)])]))),
      h("div", { class: "ws-row" }, labelled("Quantity", fieldSelect(ctx, r, "relations", "quantity_id", [["", "— none —"], ...qs.map((q) => [q.id, label(ctx, q)])])), labelled("Confidence", fieldSelect(ctx, r, "relations", "confidence", payload.vocab.confidence))),
      labelled("Evidence regions", idChips(ctx, r, "relations", "evidence_visual_ids", regions, { fromSelection: true })),
      labelled("Evidence mentions", idChips(ctx, r, "relations", "evidence_mention_ids", ms)),
    ]));
  });
  return rList;
}
function summary(ctx, ents, regions, ms, qs) {
  const { state } = ctx;
  return h("div", { class: "ws-summary" },
    h("h3", { text: "Entities and what they own" }),
    h("ul", { class: "ws-owned" }, ents.map((n) => h("li", {}, h("span", { class: "dot", "data-colour": entityColour(ctx, n.id) }),
      h("button", { type: "button", class: "linkish", onclick: () => { state.entity = state.entity === n.id ? null : n.id; render(ctx); } }, label(ctx, n)),
      h("span", { class: "muted", text: ` · ${n.type} · regions ${ids(n.visual_anchor_ids) || "—"}${(n.text_mention_ids || []).length ? ` · mentions ${ids(n.text_mention_ids)}` : ""}` }),
      qs.filter((q) => q.owner_id === n.id).length ? h("span", { class: "ws-owned__q", text: ` owns ${qs.filter((q) => q.owner_id === n.id).map((q) => q.symbol_latex || q.id).join(", ")}` }) : null))),
    h("p", { class: "muted", text: `${regions.length} regions · ${ms.length} mentions · ${qs.length} quantities · ${(state.doc.bindings || []).length} bindings · ${(state.doc.constraints || []).length} constraints · query target ${state.doc.query_target && state.doc.query_target.mention_id ? state.doc.query_target.mention_id : "—"}` }));
}
export function renderPass4(ctx) {
  const { state, payload, editable } = ctx;
  const ents = entities(ctx);
  const regions = visualNodes(ctx);
  const ms = mentions(ctx);
  const qs = state.doc.quantities || [];
  const c = payload.consolidated;
  const stale = CONSOLIDATED_KEYS.some((k) => JSON.stringify(c[k]) !== JSON.stringify(state.doc[k]));
  return [
    h("div", { class: `ws-callout${stale ? " ws-callout--warn" : ""}`, "data-testid": "consolidate-box" },
      stale ? "G_obs differs from Passes 1–3 as saved. " : "G_obs matches Passes 1–3. ",
      editable ? h("button", { type: "button", class: "btn btn--small btn--secondary", "data-action": "consolidate", onclick: () => consolidate(ctx) }, "Rebuild from Passes 1–3") : null,
      h("span", { class: "muted", text: " Relations, ambiguities and the domain are kept." })),
    section("Domain", null, null, domainNote(ctx), fieldSelect(ctx, state.doc, "__doc", "domain", domainOptions(ctx), { label: "Kit domain" })),
    section("Relations", (state.doc.relations || []).length, editable ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-relation", onclick: () => newRelation(ctx) }, "New relation") : null, relationCards(ctx, ents, regions, ms, qs)),
    section("Consolidated graph", null, null, summary(ctx, ents, regions, ms, qs)),
    renderAmbiguities(ctx),
  ];
}
