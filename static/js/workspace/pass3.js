// Pass 3 panel: text mentions (from a selection in the problem text), quantities, constraints and the
// query target.
import { renderAmbiguities } from "./ambiguities.js";
import { h, katexInto } from "./dom.js";
import { card, fieldInput, fieldSelect, idChips, issueList, labelled, section } from "./fields.js";
import { commit } from "./history.js";
import { nextId } from "./ids.js";
import { entities, entityColour, label, textOf, visualNodes } from "./model.js";
import { normalize } from "./normalize.js";
import { newEntity } from "./pass2.js";
import { render } from "./render.js";
import { focusField, select } from "./selection.js";
import { resolveSpan } from "./spans.js";

function addMention(ctx, role) {
  const { state } = ctx;
  const sel = state.selection;
  if (!sel || !sel.quote) return;
  let mid = null;
  commit(ctx, (d) => {
    // A temporary ID past any real one; normalize() puts the mention in textual order and renumbers.
    const tmp = `${ctx.idPrefix.mention}9${String(d.text_mentions.length + 1).padStart(3, "0")}`;
    d.text_mentions.push({ id: tmp, section: sel.section, quote: sel.quote, occurrence: sel.occurrence || 1, role });
    if (role === "quantity") d.quantities.push({ id: nextId(ctx, "quantities"), kind: "", symbol_latex: "", value_latex: "", unit_latex: "", owner_id: "", visual_anchor_ids: [], text_mention_ids: [tmp], provenance: ["TEXT"] });
    if (role === "constraint") d.constraints.push({ id: nextId(ctx, "constraints"), kind: "", subject_ids: [], value_text: sel.quote, provenance: ["TEXT"], evidence_visual_ids: [], evidence_mention_ids: [tmp] });
    if (role === "query_target") d.query_target.mention_id = tmp;
    normalize(ctx, d);
    const m = d.text_mentions.find((x) => x.section === sel.section && x.quote === sel.quote && x.occurrence === (sel.occurrence || 1));
    mid = m && m.id;
  });
  state.selection = null;
  window.getSelection().removeAllRanges();
  if (role === "quantity") { const q = state.doc.quantities[state.doc.quantities.length - 1]; select(ctx, "quantities", q.id); focusField(ctx, "kind"); }
  else if (role === "constraint") { const c = state.doc.constraints[state.doc.constraints.length - 1]; select(ctx, "constraints", c.id); focusField(ctx, "kind"); }
  else if (mid) select(ctx, "text_mentions", mid);
}
function selectionBox(ctx) {
  const sel = ctx.state.selection;
  if (!sel) return h("div", { class: "ws-callout ws-callout--quiet", "data-testid": "selection-box" }, "Select words in the problem text (left) to create a mention.");
  const warn = !sel.addressable ? "This exact instance cannot be addressed by the kit's rule (it overlaps an earlier match). Select a different instance or a longer quote."
    : sel.matches > 1 ? `Ambiguous quote: it occurs ${sel.matches} times; this is occurrence ${sel.occurrence}. Consider a longer quote.` : "";
  return h("div", { class: "ws-callout", "data-testid": "selection-box" },
    h("div", {}, h("strong", { text: `“${sel.quote}”` }), ` · ${sel.section} · occurrence ${sel.occurrence} of ${sel.matches} · code points [${sel.start}, ${sel.end})`),
    warn ? h("p", { class: "ws-warn", "data-testid": "span-warning", text: warn }) : null,
    ctx.editable && sel.addressable ? h("div", { class: "ws-actions" }, "Add as: ",
      ["entity", "quantity", "constraint", "query_target", "relation", "other"].map((r) => h("button", { type: "button", class: `btn btn--small ${r === "quantity" ? "btn--primary" : "btn--secondary"}`, "data-action": `mention-${r}`, onclick: () => addMention(ctx, r) }, r.replace("_", " ")))) : null);
}
function setRefersTo(ctx, mid, pid) {
  commit(ctx, (d) => {
    d.bindings = d.bindings.filter((b) => b.from_id !== mid);
    if (pid) d.bindings.push({ id: nextId(ctx, "bindings"), type: "refers_to", from_id: mid, to_id: pid, provenance: ["TEXT"], evidence_visual_ids: [], evidence_mention_ids: [mid] });
  });
}
function mentionCards(ctx, ms, entityOptions) {
  const { state, payload, editable } = ctx;
  const mentionList = h("div", { class: "rec-list", "data-testid": "mention-list" });
  ms.forEach((m, idx) => {
    const r = resolveSpan(textOf(ctx, m.section), m.quote, m.occurrence);
    const ref = state.doc.bindings.find((b) => b.from_id === m.id);
    mentionList.append(card(ctx, "text_mentions", m, idx, `${m.id} · “${m.quote}” · ${m.role}${ref ? ` → ${ref.to_id}` : ""}`, () => [
      h("p", { class: `ws-span ws-span--${r.status}` }, `${m.section}, occurrence ${m.occurrence}: ${r.status.replace(/_/g, " ")}${r.span ? ` [${r.span[0]}, ${r.span[1]})` : ""} · ${r.all_matches.length} match${r.all_matches.length === 1 ? "" : "es"}`),
      h("div", { class: "ws-row" }, labelled("Role", fieldSelect(ctx, m, "text_mentions", "role", payload.vocab.mention_roles)),
        labelled("Refers to entity", (() => {
          const s = h("select", { class: "ws-input", "data-field": "refers_to", disabled: !editable, "aria-label": "Refers to" }, entityOptions.map(([v, t]) => h("option", { value: v, selected: (ref ? ref.to_id : "") === v }, t)));
          s.addEventListener("change", () => setRefersTo(ctx, m.id, s.value));
          return s;
        })())),
    ]));
  });
  return mentionList;
}
// The quantity typeset whole (its parts are LaTeX fields), e.g. "s = 5.0\,\text{km}".
function quantityTex(tex) {
  const el = h("span", { class: "ws-tex", "data-testid": "quantity-tex" });
  katexInto(el, tex);
  return el;
}
function quantityCards(ctx, ents, regions, ms, entityOptions) {
  const qList = h("div", { class: "rec-list", "data-testid": "quantity-list" });
  ctx.state.doc.quantities.forEach((q, idx) => {
    const owner = ents.find((n) => n.id === q.owner_id);
    const tex = [q.symbol_latex, q.value_latex ? `${q.symbol_latex ? "= " : ""}${q.value_latex}` : "", q.unit_latex ? `\\,${q.unit_latex}` : ""].join(" ").trim();
    const title = [`${q.id} · ${q.kind || "(kind?)"} `, tex ? quantityTex(tex) : null, ` → ${owner ? label(ctx, owner) : "owner?"}`];
    qList.append(card(ctx, "quantities", q, idx, title, () => {
      const preview = h("span", { class: "ws-latex" });
      katexInto(preview, [q.symbol_latex, q.value_latex ? `= ${q.value_latex}` : "", q.unit_latex ? `\\,${q.unit_latex}` : ""].join(" ").trim());
      return [
        h("div", { class: "ws-row" }, labelled("Kind", fieldInput(ctx, q, "quantities", "kind", { placeholder: "e.g. force magnitude", list: "ws-kinds" })), labelled("Owner", fieldSelect(ctx, q, "quantities", "owner_id", entityOptions))),
        h("div", { class: "ws-row" }, labelled("Symbol (LaTeX)", fieldInput(ctx, q, "quantities", "symbol_latex", { placeholder: "F_1" })), labelled("Value (LaTeX)", fieldInput(ctx, q, "quantities", "value_latex", { placeholder: "3" })), labelled("Unit (LaTeX)", fieldInput(ctx, q, "quantities", "unit_latex", { placeholder: "\\text{N}" }))),
        h("p", { class: "ws-preview" }, "Preview: ", preview),
        labelled("Glyph anchors (regions)", idChips(ctx, q, "quantities", "visual_anchor_ids", regions, { fromSelection: true, placeholder: "+ region…" })),
        labelled("Mention anchors", idChips(ctx, q, "quantities", "text_mention_ids", ms, { placeholder: "+ mention…" })),
      ];
    }, { dot: owner ? entityColour(ctx, owner.id) : null }));
  });
  return qList;
}
function constraintCards(ctx, ents, regions, ms) {
  const cList = h("div", { class: "rec-list" });
  ctx.state.doc.constraints.forEach((c, idx) => {
    cList.append(card(ctx, "constraints", c, idx, `${c.id} · ${c.kind || "(kind?)"} · ${c.value_text || ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Kind", fieldInput(ctx, c, "constraints", "kind", { placeholder: "e.g. static_equilibrium" })), labelled("Value text", fieldInput(ctx, c, "constraints", "value_text"))),
      labelled("Subjects", idChips(ctx, c, "constraints", "subject_ids", ents)),
      labelled("Evidence regions", idChips(ctx, c, "constraints", "evidence_visual_ids", regions, { fromSelection: true })),
      labelled("Evidence mentions", idChips(ctx, c, "constraints", "evidence_mention_ids", ms)),
    ]));
  });
  return cList;
}
function queryTargetCard(ctx, ents, ms) {
  const { state } = ctx;
  const qt = state.doc.query_target;
  return h("div", { class: "rec is-selected", "data-rec": "query_target:" },
    h("div", { class: "rec__body" },
      h("div", { class: "ws-row" },
        labelled("Query mention", fieldSelect(ctx, qt, "query_target", "mention_id", [["", "— none —"], ...ms.filter((m) => m.section === "query").map((m) => [m.id, label(ctx, m)])])),
        labelled("Target kind", fieldInput(ctx, qt, "query_target", "target_kind", { placeholder: "e.g. torque" })),
        labelled("Target symbol", fieldInput(ctx, qt, "query_target", "target_symbol_latex", { placeholder: "\\tau" }))),
      labelled("Target entities", idChips(ctx, qt, "query_target", "target_node_ids", ents)),
      labelled("Location entities", idChips(ctx, qt, "query_target", "location_node_ids", ents))),
    issueList(state.issues.filter((i) => (i.path || "").startsWith("query_target"))));
}
function newQuantity(ctx) {
  const { state } = ctx;
  commit(ctx, (d) => { d.quantities.push({ id: nextId(ctx, "quantities"), kind: "", symbol_latex: "", value_latex: "", unit_latex: "", owner_id: "", visual_anchor_ids: state.selected && state.selected.col === "visual_nodes" ? [state.selected.id] : [], text_mention_ids: [], provenance: [] }); });
  select(ctx, "quantities", state.doc.quantities[state.doc.quantities.length - 1].id);
  focusField(ctx, "kind");
}
function newConstraint(ctx) {
  const { state } = ctx;
  commit(ctx, (d) => { d.constraints.push({ id: nextId(ctx, "constraints"), kind: "", subject_ids: [], value_text: "", provenance: [], evidence_visual_ids: [], evidence_mention_ids: [] }); });
  select(ctx, "constraints", state.doc.constraints[state.doc.constraints.length - 1].id);
}
export function renderPass3(ctx) {
  const { state, editable } = ctx;
  const ents = entities(ctx);
  const ms = state.doc.text_mentions;
  const regions = visualNodes(ctx);
  const entityOptions = [["", "— unresolved —"], ...ents.map((n) => [n.id, label(ctx, n)])];
  return [
    selectionBox(ctx),
    section("Mentions", ms.length, null, mentionCards(ctx, ms, entityOptions)),
    section("Quantities", state.doc.quantities.length, editable ? h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "new-quantity", onclick: () => newQuantity(ctx) }, "New quantity") : null, quantityCards(ctx, ents, regions, ms, entityOptions)),
    section("Constraints", state.doc.constraints.length, editable ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: () => newConstraint(ctx) }, "New constraint") : null, constraintCards(ctx, ents, regions, ms)),
    section("Query target", null, null, queryTargetCard(ctx, ents, ms)),
    section("Entities", ents.length, editable ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: () => newEntity(ctx) }, "New entity") : null,
      h("div", { class: "ws-chips" }, ents.map((n) => h("button", { type: "button", class: `chip chip--btn${state.entity === n.id ? " is-on" : ""}`, onclick: () => { state.entity = state.entity === n.id ? null : n.id; render(ctx); } }, h("span", { class: "dot", "data-colour": entityColour(ctx, n.id) }), label(ctx, n))))),
    renderAmbiguities(ctx),
  ];
}
