// Rendering the page from the document: the record panel of this pass, the header, the issues, the
// text and the canvas. Called after every change; keeps the focused field and its caret.
import { mountCanvas, syncCanvas } from "./canvas.js";
import { $, h } from "./dom.js";
import { colourDots } from "./fields.js";
import { blockingIssues, renderIssues } from "./issues.js";
import { fixBboxInputs, renderPass1 } from "./pass1.js";
import { renderPass2 } from "./pass2.js";
import { renderPass3 } from "./pass3.js";
import { renderPass4 } from "./pass4.js";
import { renderPass5 } from "./pass5.js";
import { setSaveState } from "./save_state.js";
import { renderText } from "./text.js";

const PANELS = { 1: renderPass1, 2: renderPass2, 3: renderPass3, 4: renderPass4, 5: renderPass5 };
const QUANTITY_KINDS = ["force", "mass", "length", "distance", "angle", "torque", "velocity", "acceleration", "time", "charge", "current", "resistance", "voltage", "field_strength", "other"];
const HINTS = {
  1: "Draw a box around every label and object (R, then drag); draw arrows, lines, points, curves, circles, arcs and angle marks with their shape tools (A, L, P, C, O, U, G; ? lists them). Type the exact visible text of text glyphs (a glyph without text is a validation issue).",
  2: "Create an entity (E), then select its regions on the diagram and bind them (B). Colours show which entity owns a region.",
  3: "Select words in the text to create mentions; give every quantity its glyph or mention anchors and, when the problem says, its owner; let a mention refer to every new entity.",
  4: "Check the consolidated graph, add relations, and fix every validation issue; then submit.",
  5: "Align each solution step with the observations it uses.",
};

export function renderPanel(ctx) {
  const panel = $("ws-panel");
  const active = document.activeElement;
  const key = active && active.getAttribute && active.getAttribute("data-k");
  const caret = key && active.selectionStart !== undefined ? [active.selectionStart, active.selectionEnd] : null;
  const scroller = $("ws-side"); const scroll = scroller.scrollTop;
  const body = (PANELS[ctx.pass] || renderPass5)(ctx);
  const datalists = [h("datalist", { id: "ws-predicates" }, ctx.relationPredicates.map((p) => h("option", { value: p }))),
    h("datalist", { id: "ws-kinds" }, QUANTITY_KINDS.map((p) => h("option", { value: p })))];
  panel.replaceChildren(...body.flat().filter(Boolean), ...datalists);
  if (ctx.pass === 1) fixBboxInputs(ctx, panel);
  colourDots(panel);
  scroller.scrollTop = scroll;
  if (key) {
    const el = panel.querySelector(`[data-k="${CSS.escape(key)}"]`);
    if (el && el !== document.activeElement) { el.focus(); if (caret && el.setSelectionRange) try { el.setSelectionRange(caret[0], caret[1]); } catch (_) { /* number inputs */ } }
  }
}
function renderHeader(ctx) {
  const { state, editable } = ctx;
  $("ws-undo").disabled = !state.undo.length; $("ws-redo").disabled = !state.redo.length;
  const st = $("ws-doc-status");
  st.textContent = state.status === "new" ? "not started" : state.status;
  st.className = `ws-status ws-status--${state.status}`;
  const submitBtn = $("ws-submit");
  const blocking = blockingIssues(state.issues).length;  // physics warnings never block submitting
  const blocked = !editable || blocking > 0 || state.status === "submitted" || state.status === "approved";
  submitBtn.disabled = blocked;
  const nextBtn = $("ws-submit-next");
  if (nextBtn) nextBtn.disabled = blocked;
  submitBtn.textContent = state.status === "submitted" ? "Submitted" : state.status === "approved" ? "Approved" : blocking ? `Fix ${blocking} issue${blocking === 1 ? "" : "s"} to submit` : (ctx.payload.submit_label || "Submit for review");
  setSaveState(ctx);
}
export function renderImageTabs(ctx) {
  const { state, payload } = ctx;
  const { images } = payload;
  const box = $("ws-image-tabs");
  box.replaceChildren(...(images.length > 1 ? images.map((img, i) => h("button", { type: "button", class: "tool", "aria-pressed": String(i === state.imageIndex), onclick: () => { state.imageIndex = i; mountCanvas(ctx); renderImageTabs(ctx); } }, img.image_id)) : [h("span", { class: "ws-imgname", text: images[0] ? `${images[0].image_id} · ${images[0].width}×${images[0].height}px` : "no image" })]));
}
export function renderHint(ctx) {
  const { state, payload } = ctx;
  const hint = HINTS[ctx.pass];
  // The workspace page shows a rejection's note itself, at the top (#ws-review-note); the review page has none.
  // A submitted document's note is the previous round's: not repeated while it waits for review.
  const note = payload.state.review_note && !$("ws-review-note") && state.status !== "submitted" ? ` Reviewer note: ${payload.state.review_note}` : "";
  $("ws-hint").textContent = ctx.editable ? hint : `Read only (${state.status}).${note}`;
  $("ws-help-pass").textContent = hint;
}
export function render(ctx) {
  renderPanel(ctx);
  renderHeader(ctx);
  renderIssues(ctx);
  renderText(ctx);
  syncCanvas(ctx);
}
