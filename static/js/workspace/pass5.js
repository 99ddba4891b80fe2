// Pass 5 panel: solution steps aligned with the observations (Pass 4's records) they use.
import { h, pad } from "./dom.js";
import { card, fieldInput, fieldSelect, idChips, labelled, section } from "./fields.js";
import { commit } from "./history.js";

function newStep(ctx) {
  commit(ctx, (d) => { d.solution_steps.push({ step_id: pad(ctx.collectionPrefix.solution_steps, d.solution_steps.length + 1), text: "", step_type: "read_given", uses_obs_node_ids: [], uses_obs_quantity_ids: [], uses_obs_relation_ids: [], uses_obs_constraint_ids: [] }); });
}
export function renderPass5(ctx) {
  const { state, payload, editable } = ctx;
  const g = ctx.earlier.pass4 || {};
  const list = h("div", { class: "rec-list" });
  (state.doc.solution_steps || []).forEach((st, idx) => {
    list.append(card(ctx, "solution_steps", st, idx, `${st.step_id} · ${st.step_type} · ${(st.text || "").slice(0, 50)}`, () => [
      labelled("Step text", fieldInput(ctx, st, "solution_steps", "text", { multiline: true })),
      labelled("Step type", fieldSelect(ctx, st, "solution_steps", "step_type", payload.vocab.step_types)),
      labelled("Uses nodes", idChips(ctx, st, "solution_steps", "uses_obs_node_ids", [...(g.physical_nodes || []), ...(g.visual_nodes || [])])),
      labelled("Uses quantities", idChips(ctx, st, "solution_steps", "uses_obs_quantity_ids", g.quantities || [])),
      labelled("Uses relations", idChips(ctx, st, "solution_steps", "uses_obs_relation_ids", g.relations || [])),
      labelled("Uses constraints", idChips(ctx, st, "solution_steps", "uses_obs_constraint_ids", g.constraints || [])),
    ]));
  });
  return [
    section("Solution steps", (state.doc.solution_steps || []).length, editable ? h("button", { type: "button", class: "btn btn--secondary btn--small", onclick: () => newStep(ctx) }, "New step") : null, list),
    section("Final answer", null, null, fieldInput(ctx, state.doc, "__doc", "final_answer", { label: "Final answer" })),
  ];
}
