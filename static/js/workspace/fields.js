// Builders for the record panels: inputs and selects bound to a record field, ID chips, record cards
// and sections. Every change goes through commit().
import { commentList } from "./comments.js";
import { h } from "./dom.js";
import { removeRecord } from "./editing.js";
import { commit } from "./history.js";
import { entityColour, isKind, label, labelNode } from "./model.js";
import { select } from "./selection.js";

function findIn(d, col, id) {
  if (col === "query_target") return d.query_target;
  if (col === "__doc") return d;
  return (d[col] || []).find((r) => (r.id || r.step_id) === id);
}
export function fieldInput(ctx, rec, col, key, opts = {}) {
  const id = `f-${col}-${rec.id || rec.step_id}-${key}`;
  const input = h(opts.multiline ? "textarea" : "input", {
    id, class: `ws-input ${opts.cls || ""}`, type: opts.multiline ? null : (opts.type || "text"), value: rec[key] ?? "",
    "data-field": key, "data-k": id, placeholder: opts.placeholder || "", disabled: !ctx.editable, spellcheck: "false",
    list: opts.list || null, rows: opts.multiline ? 3 : null, "aria-label": opts.label || key,
  });
  input.addEventListener("input", () => {
    const value = opts.type === "number" ? parseInt(input.value, 10) : input.value;
    if (opts.type === "number" && Number.isNaN(value)) return;
    commit(ctx, (d) => { const r = findIn(d, col, rec.id || rec.step_id); if (r) { if (opts.path) opts.path(r, value); else r[key] = value; } }, { coalesce: id });
  });
  return input;
}
export function fieldSelect(ctx, rec, col, key, options, opts = {}) {
  const id = `f-${col}-${rec.id || rec.step_id}-${key}`;
  const sel = h("select", { id, class: "ws-input", "data-field": key, "data-k": id, disabled: !ctx.editable, "aria-label": opts.label || key },
    options.map((o) => { const [v, t] = Array.isArray(o) ? o : [o, o]; return h("option", { value: v, selected: (rec[key] ?? "") === v }, t); }));
  sel.addEventListener("change", () => commit(ctx, (d) => { const r = findIn(d, col, rec.id || rec.step_id); if (r) r[key] = sel.value; if (opts.after) opts.after(d, r, sel.value); }));
  return sel;
}
export function labelled(text, control, extra) {
  return h("label", { class: "ws-field" }, h("span", { class: "ws-field__label", text }), control, extra || null);
}
// A list of IDs edited as chips plus a select to add one.
export function idChips(ctx, rec, col, key, choices, opts = {}) {
  const { state, editable } = ctx;
  const value = (col === "query_target" ? state.doc.query_target[key] : rec[key]) || [];
  const wrap = h("div", { class: "ws-chips", "data-k": `chips-${col}-${rec.id || ""}-${key}` });
  for (const v of value) {
    const c = choices.find((x) => x.id === v);
    wrap.append(h("span", { class: "chip", "data-id": v },
      c && isKind(ctx, c.id, "physical") ? h("span", { class: "dot", "data-colour": entityColour(ctx, v) }) : null,
      c ? labelNode(ctx, c) : v,
      editable ? h("button", { type: "button", class: "chip__x", "aria-label": `Remove ${v}`, onclick: () => commit(ctx, (d) => { const r = findIn(d, col, rec.id); r[key] = r[key].filter((x) => x !== v); }) }, "×") : null));
  }
  if (editable) {
    const rest = choices.filter((c) => !value.includes(c.id));
    const add = h("select", { class: "ws-input ws-input--add", "aria-label": opts.label || `Add to ${key}`, "data-field": `add-${key}` },
      h("option", { value: "" }, opts.placeholder || "+ add…"), rest.map((c) => h("option", { value: c.id }, label(ctx, c))));
    add.addEventListener("change", () => { if (add.value) { const v = add.value; commit(ctx, (d) => { const r = findIn(d, col, rec.id); r[key] = [...(r[key] || []), v].sort(); }); } });
    wrap.append(add);
    if (opts.fromSelection && state.selected && state.selected.col === "visual_nodes" && !value.includes(state.selected.id)) {
      const vid = state.selected.id;
      wrap.append(h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": `use-region-${key}`, onclick: () => commit(ctx, (d) => { const r = findIn(d, col, rec.id); r[key] = [...(r[key] || []), vid].sort(); }) }, `+ selected region ${vid}`));
    }
  }
  return wrap;
}
export function colourDots(root) {
  for (const el of root.querySelectorAll("[data-colour]")) el.style.backgroundColor = el.getAttribute("data-colour");
}
function recordIssues(ctx, col, idx) {
  const prefix = `${col}[${idx}]`;
  return ctx.state.issues.filter((i) => i.path === prefix || (i.path || "").startsWith(`${prefix}.`) || (i.path || "").startsWith(`${prefix}[`));
}
export function issueList(list) {
  return list.length ? h("ul", { class: "ws-rec-issues" }, list.map((i) => h("li", { class: i.severity === "warning" ? "is-warning" : "" }, h("code", { text: i.code }), " ", i.message))) : null;
}
// One record: a title button that selects it, a delete button, its fields when selected, its issues.
export function card(ctx, col, rec, idx, title, body, opts = {}) {
  const { state } = ctx;
  const id = rec.id || rec.step_id;
  const selected = state.selected && state.selected.id === id;
  const issues = recordIssues(ctx, col, idx);
  return h("article", { class: `rec${selected ? " is-selected" : ""}${issues.length ? " has-issues" : ""}`, "data-rec": `${col}:${id}` },
    h("header", { class: "rec__head" },
      h("button", { type: "button", class: "rec__title", onclick: () => select(ctx, col, id), "aria-expanded": String(selected) }, opts.dot ? h("span", { class: "dot", "data-colour": opts.dot }) : null, title),
      ctx.editable && opts.remove !== false ? h("button", { type: "button", class: "rec__del", title: "Delete", "aria-label": `Delete ${id}`, onclick: () => (opts.onRemove ? opts.onRemove() : removeRecord(ctx, col, id)) }, "Delete") : null),
    selected || opts.open ? h("div", { class: "rec__body" }, body()) : null,
    issueList(issues),
    commentList(ctx, id));
}
export function section(title, count, actions, ...children) {
  return h("section", { class: "ws-section" }, h("div", { class: "ws-section__head" }, h("h2", {}, title, count !== null ? h("span", { class: "count", text: String(count) }) : null), actions || null), ...children);
}
