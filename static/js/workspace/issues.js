// The validation panel under the records: the server's issues, each a link to its record.
import { $, h } from "./dom.js";
import { select } from "./selection.js";

// The editor that fixes an issue whose path names only its record.
const FIELD_FOR_CODE = { PHYSICAL_NODE_UNBOUND: "bind-region" };
// An issue's path names its record by position (visual_nodes[2].text) and, after it, the field at fault.
function issueTarget(ctx, issue) {
  const path = issue.path || "";
  const m = /^([a-z_]+)\[(\d+)\](?:\.([a-z_0-9]+))?/.exec(path);
  if (!m && !path.startsWith("query_target") && issue.record_id) return recordById(ctx, issue.record_id);
  if (!m) return path.startsWith("query_target") ? { col: "query_target", id: "", field: path.split(".")[1] || "mention_id" } : null;
  const rec = (ctx.state.doc[m[1]] || [])[parseInt(m[2], 10)];
  return rec ? { col: m[1], id: rec.id || rec.step_id, field: m[3] || FIELD_FOR_CODE[issue.code] || "" } : null;
}
// A physics finding without a record path names its record by id: the collection that holds it.
function recordById(ctx, id) {
  for (const [col, recs] of Object.entries(ctx.state.doc)) {
    if (Array.isArray(recs) && recs.some((r) => r && (r.id === id || r.step_id === id))) return { col, id, field: "" };
  }
  return null;
}
// The record's editor: the field the issue names (a box's four numbers for bbox_1000), else its first field.
function editorOf(card, field) {
  const usable = (el) => el && !el.disabled;
  const named = field && card.querySelector(`[data-field="${field}"]`);
  if (usable(named)) return named;
  const prefix = field && field.endsWith("_1000") && card.querySelector(`[data-field^="${field.slice(0, -4)}"]`);
  if (usable(prefix)) return prefix;
  return [...card.querySelectorAll(".rec__body input, .rec__body select, .rec__body textarea")].find(usable) || null;
}
// Clicking an issue selects its record (its card opens, is scrolled into view and its editor takes the caret;
// a region is also selected on the diagram), as a click on the record would.
function jumpTo(ctx, t) {
  select(ctx, t.col, t.id);
  const card = document.querySelector(`[data-rec="${t.col}:${t.id}"]`);
  if (!card) return;
  card.scrollIntoView({ block: "nearest" });
  card.classList.add("flash"); setTimeout(() => card.classList.remove("flash"), 1200);
  // after the canvas has handled the selection (it may move focus to the diagram), as focusField does
  const token = ctx.state.keyToken;
  const focus = () => {
    if (ctx.state.keyToken !== token) return;  // a key pressed meanwhile wins
    const el = editorOf(document.querySelector(`[data-rec="${t.col}:${t.id}"]`) || card, t.field);
    const active = document.activeElement;
    if (!el || active === el) return;
    if (active && active.matches && active.matches("#ws-panel input, #ws-panel textarea, #ws-panel select")) return;  // the user moved on
    el.focus();
    if (el.select && el.tagName === "INPUT") el.select();
  };
  setTimeout(focus, 0);
  setTimeout(focus, 120);
}
// Physics findings carry a severity: a "warning" is listed in its own group and never blocks submitting; a
// "blocking" one (an admin made its rule so, /physics-rules/) blocks like a validator issue. The validator's
// issues have no severity: they always block.
export const isWarning = (issue) => issue.severity === "warning";
export function blockingIssues(issues) { return issues.filter((i) => !isWarning(i)); }
function issueItem(ctx, i) {
  const t = issueTarget(ctx, i);
  return h("li", {}, h("button", { type: "button", class: `ws-issue${isWarning(i) ? " ws-issue--warning" : ""}`, disabled: !t, onclick: () => { if (t) jumpTo(ctx, t); } },
    h("code", { text: i.code }), h("span", { class: "ws-issue__path", text: i.path || "document" }), h("span", { text: i.message })));
}
export function renderIssues(ctx) {
  const blocking = blockingIssues(ctx.state.issues);
  const warnings = ctx.state.issues.filter(isWarning);
  const box = $("ws-issues");
  const n = blocking.length;
  const w = warnings.length;
  box.replaceChildren(...[h("h2", {}, n ? `${n} validation issue${n === 1 ? "" : "s"}` : "No validation issues", n ? null : h("span", { class: "ws-okmark", text: " ✓" })),
    n ? h("p", { class: "muted", text: `Submitting is blocked until ${n === 1 ? "this issue is" : `these ${n} issues are`} fixed. Click an issue to jump to its record.` }) : h("p", { class: "muted", text: "This document passes the validator and can be submitted." }),
    n ? h("ul", { class: "ws-issue-list", "data-testid": "issues" }, blocking.map((i) => issueItem(ctx, i))) : null,
    w ? h("h3", { class: "ws-warnings__title" }, `Physics warnings (${w})`) : null,
    w ? h("p", { class: "muted", text: `Advisory: ${w === 1 ? "it does" : "they do"} not block submitting. Click one to jump to its record.` }) : null,
    w ? h("ul", { class: "ws-issue-list ws-issue-list--warnings", "data-testid": "physics-warnings" }, warnings.map((i) => issueItem(ctx, i))) : null].filter(Boolean));
  box.className = `ws-issues${n ? " has-issues" : " is-clean"}${w ? " has-warnings" : ""}`;
}
