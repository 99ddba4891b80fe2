// The ambiguities section (every pass that has one): what the evidence cannot settle.
import { h } from "./dom.js";
import { card, fieldInput, idChips, labelled } from "./fields.js";
import { commit } from "./history.js";
import { nextId } from "./ids.js";
import { entities, mentions, visualNodes } from "./model.js";

export function renderAmbiguities(ctx) {
  const { state, editable } = ctx;
  const list = h("div", { class: "rec-list" });
  (state.doc.ambiguities || []).forEach((u, idx) => {
    list.append(card(ctx, "ambiguities", u, idx, `${u.id} · ${u.scope || "scope?"} · ${u.description || ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Scope", fieldInput(ctx, u, "ambiguities", "scope", { placeholder: "e.g. owner" })), labelled("Description", fieldInput(ctx, u, "ambiguities", "description"))),
      labelled("Candidates", idChips(ctx, u, "ambiguities", "candidate_ids", [...entities(ctx), ...visualNodes(ctx)])),
      labelled("Evidence regions", idChips(ctx, u, "ambiguities", "evidence_visual_ids", visualNodes(ctx), { fromSelection: true })),
      labelled("Evidence mentions", idChips(ctx, u, "ambiguities", "evidence_mention_ids", mentions(ctx))),
    ]));
  });
  return h("details", { class: "ws-section ws-amb", open: (state.doc.ambiguities || []).length ? true : null },
    h("summary", {}, `Ambiguities (${(state.doc.ambiguities || []).length})`),
    h("p", { class: "muted", text: "Record anything the evidence cannot settle. Any ambiguity blocks this problem's probes." }),
    editable ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: () => commit(ctx, (d) => { d.ambiguities.push({ id: nextId(ctx, "ambiguities"), scope: "", description: "", candidate_ids: [], evidence_visual_ids: [], evidence_mention_ids: [] }); }) }, "Add ambiguity") : null,
    list);
}
