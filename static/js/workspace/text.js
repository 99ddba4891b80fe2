// The problem text beside the diagram: mentions highlighted in their owner's colour, and (Pass 3) the
// browser selection read as a mention candidate.
import { $, h } from "./dom.js";
import { allBindings, entityColour, mentions, textOf } from "./model.js";
import { renderPanel } from "./render.js";
import { select } from "./selection.js";
import { mentionFromSelection, resolveSpan, toUtf16 } from "./spans.js";

function sectionBlock(ctx, sec) {
  const { state } = ctx;
  const text = textOf(ctx, sec);
  if (!text) return null;
  const p = h("p", { class: "ws-textsec", "data-section": sec });
  // highlight mentions (code point spans -> UTF-16)
  const spans = [];
  for (const m of mentions(ctx)) if (m.section === sec) { const r = resolveSpan(text, m.quote, m.occurrence); if (r.span) spans.push({ s: toUtf16(text, r.span[0]), e: toUtf16(text, r.span[1]), m }); }
  spans.sort((a, b) => a.s - b.s);
  let at = 0;
  for (const sp of spans) {
    if (sp.s < at) continue;
    p.append(text.slice(at, sp.s));
    const q = (state.doc.quantities || []).find((x) => (x.text_mention_ids || []).includes(sp.m.id));
    const ref = allBindings(ctx).find((b) => b.type === "refers_to" && b.from_id === sp.m.id);
    const owner = q ? q.owner_id : ref ? ref.to_id : "";
    const mark = h("mark", { class: `ws-mention${state.selected && state.selected.id === sp.m.id ? " is-selected" : ""}`, "data-mention": sp.m.id, title: `${sp.m.id} · ${sp.m.role}`, "data-colour-border": owner ? entityColour(ctx, owner) : "" }, text.slice(sp.s, sp.e));
    mark.addEventListener("click", () => select(ctx, "text_mentions", sp.m.id));
    p.append(mark);
    at = sp.e;
  }
  p.append(text.slice(at));
  return h("div", { class: "ws-textblock" }, h("h3", { text: sec === "stem" ? "Statement" : "Question" }), p);
}
export function renderText(ctx) {
  const { pass, payload } = ctx;
  const box = $("ws-text");
  const parts = ["stem", "query"].map((sec) => sectionBlock(ctx, sec)).filter(Boolean);
  if ((payload.problem.options || []).length) parts.push(h("div", { class: "ws-textblock" }, h("h3", { text: "Options" }), h("ul", { class: "ws-options" }, payload.problem.options.map((o) => h("li", {}, h("strong", { text: `${o.id}. ` }), o.text)))));
  if (pass === 5 && payload.solution !== undefined) parts.push(h("div", { class: "ws-textblock ws-solution" }, h("h3", { text: "Solution (shown in Pass 5 only)" }), h("p", { class: "ws-pre", text: payload.solution })));
  if (!parts.length) parts.push(h("p", { class: "muted", text: "This problem has no text." }));
  box.replaceChildren(h("h2", { class: "ws-text__title", text: pass === 3 ? "Problem text — select words to create a mention" : "Problem text" }), ...parts);
  for (const el of box.querySelectorAll("[data-colour-border]")) if (el.getAttribute("data-colour-border")) el.style.borderBottomColor = el.getAttribute("data-colour-border");
}
export function readSelection(ctx) {
  if (ctx.pass !== 3) return;
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return;
  const range = sel.getRangeAt(0);
  const secEl = range.startContainer.parentElement && range.startContainer.parentElement.closest("[data-section]");
  const endEl = range.endContainer.parentElement && range.endContainer.parentElement.closest("[data-section]");
  if (!secEl || secEl !== endEl) return;
  const offset = (node, off) => { const r = document.createRange(); r.selectNodeContents(secEl); r.setEnd(node, off); return r.toString().length; };
  const s = offset(range.startContainer, range.startOffset); const e = offset(range.endContainer, range.endOffset);
  const section = secEl.getAttribute("data-section");
  const text = textOf(ctx, section);
  if (e <= s) return;
  ctx.state.selection = { section, ...mentionFromSelection(text, s, e) };
  renderPanel(ctx);
}
