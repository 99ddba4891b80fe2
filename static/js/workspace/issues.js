// The validation panel under the records: the server's issues, each a link to its record.
import { $, h } from "./dom.js";
import { select } from "./selection.js";

function issueTarget(ctx, path) {
  const m = /^([a-z_]+)\[(\d+)\]/.exec(path || "");
  if (!m) return path && path.startsWith("query_target") ? { col: "query_target", id: "" } : null;
  const rec = (ctx.state.doc[m[1]] || [])[parseInt(m[2], 10)];
  return rec ? { col: m[1], id: rec.id || rec.step_id } : null;
}
function jumpTo(ctx, t) {
  select(ctx, t.col, t.id);
  const el = document.querySelector(`[data-rec="${t.col}:${t.id}"]`);
  if (el) { el.classList.add("flash"); setTimeout(() => el.classList.remove("flash"), 1200); }
}
export function renderIssues(ctx) {
  const { issues } = ctx.state;
  const box = $("ws-issues");
  const n = issues.length;
  const items = issues.map((i) => {
    const t = issueTarget(ctx, i.path);
    return h("li", {}, h("button", { type: "button", class: "ws-issue", disabled: !t, onclick: () => { if (t) jumpTo(ctx, t); } },
      h("code", { text: i.code }), h("span", { class: "ws-issue__path", text: i.path || "document" }), h("span", { text: i.message })));
  });
  box.replaceChildren(...[h("h2", {}, n ? `${n} validation issue${n === 1 ? "" : "s"}` : "No validation issues", n ? null : h("span", { class: "ws-okmark", text: " ✓" })),
    n ? h("p", { class: "muted", text: "Submitting is blocked until every issue is fixed. Click an issue to jump to its record." }) : h("p", { class: "muted", text: "This document passes the validator and can be submitted." }),
    n ? h("ul", { class: "ws-issue-list", "data-testid": "issues" }, items) : null].filter(Boolean));
  box.className = `ws-issues${n ? " has-issues" : " is-clean"}`;
}
