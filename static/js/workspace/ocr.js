// OCR suggestions on Pass 1 (annotation.ocr): "Propose text (OCR)" queues a run for this problem and polls
// it; its proposals show as dashed boxes with their text on the canvas (not regions: nothing is in the
// document until accepted) and as a list under the toolbar, where each can be accepted, edited (its text;
// the box is kept as proposed) or dropped, or all at once. Keys: T / Shift+T step through the suggestions,
// Enter accepts the active one, Delete drops it. A decision first saves the workspace's pending edits, then
// sends the current version; the server's answer (document and version) replaces the workspace's.
import { api } from "./api.js";
import { hideBanner, showBanner } from "./banner.js";
import { kToPx } from "./coords.js";
import { $, h } from "./dom.js";
import { currentImage } from "./model.js";
import { render } from "./render.js";
import { save } from "./saving.js";
import { dropLocal } from "./storage.js";

const NS = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;

function svg(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}
// The routes come from the template's data attributes (its {% url %} tags); the run detail's has a 0 for the id.
function urls() {
  const d = $("ws-ocr").dataset;
  return { run: d.runUrl, list: `${d.listUrl}?status=proposed`, decide: d.decideUrl, runDetail: (id) => d.runDetailUrl.replace(/0\/$/, `${id}/`) };
}
function ocrState(ctx) {
  if (!ctx.ocr) ctx.ocr = { proposals: [], active: null, busy: false, polling: null };
  return ctx.ocr;
}
function shown(ctx) {
  const img = currentImage(ctx);
  return ocrState(ctx).proposals.filter((p) => img && p.image_id === img.image_id);
}

export function setupOcr(ctx) {
  if (ctx.pass !== 1 || !$("ws-ocr")) return;
  const o = ocrState(ctx);
  const start = $("ws-ocr-start");
  if (!ctx.editable) { start.disabled = true; $("ws-ocr-accept-all").disabled = true; $("ws-ocr-drop-all").disabled = true; }
  start.addEventListener("click", () => startRun(ctx));
  $("ws-ocr-accept-all").addEventListener("click", () => decide(ctx, shown(ctx).map((p) => decisionFor(p, "accept"))));
  $("ws-ocr-drop-all").addEventListener("click", () => decide(ctx, shown(ctx).map((p) => ({ proposal_id: p.id, action: "drop" }))));
  o.loaded = loadProposals(ctx);
}

// Every undecided proposal of this problem, page by page (the list pages by cursor).
async function loadProposals(ctx) {
  const found = [];
  let url = `${urls().list}&page_size=500`;
  while (url) {
    const res = await api(url, "GET");
    if (res.status !== 200) return;
    found.push(...res.data.results);
    url = res.data.next;
  }
  ocrState(ctx).proposals = found;
  renderOcr(ctx);
}

function progress(ctx, text) {
  const el = $("ws-ocr-status");
  el.textContent = text;
  el.hidden = !text;
}

async function startRun(ctx) {
  const o = ocrState(ctx);
  if (o.polling) return;
  $("ws-ocr-start").disabled = true;
  progress(ctx, "Queued…");
  const res = await api(urls().run, "POST", {});
  if (res.status !== 202 && res.status !== 200) {
    $("ws-ocr-start").disabled = false;
    progress(ctx, "");
    showBanner(`OCR not started: ${(res.data && res.data.message) || `HTTP ${res.status}`}`, "error");
    return;
  }
  poll(ctx, res.data);
}

function poll(ctx, run) {
  const o = ocrState(ctx);
  const show = (r) => progress(ctx, r.status === "queued" ? "Queued…" : `Reading… ${r.done} / ${r.total} image${r.total === 1 ? "" : "s"}`);
  const step = async () => {
    const res = await api(urls().runDetail(run.id), "GET");
    if (res.status !== 200) { o.polling = setTimeout(step, POLL_MS * 3); return; }
    const r = res.data;
    if (r.status === "done") {
      o.polling = null;
      await loadProposals(ctx);
      const n = shown(ctx).length;
      progress(ctx, n ? `${n} suggestion${n === 1 ? "" : "s"}: T steps through them, Enter accepts, Delete drops.` : "OCR found no new text.");
      $("ws-ocr-start").disabled = !ctx.editable;
      return;
    }
    if (r.status === "failed") {
      o.polling = null;
      progress(ctx, "");
      showBanner(`OCR failed: ${r.error}`, "error");
      $("ws-ocr-start").disabled = !ctx.editable;
      return;
    }
    show(r);
    o.polling = setTimeout(step, POLL_MS);
  };
  show(run);
  o.polling = setTimeout(step, run.status === "done" ? 0 : POLL_MS);
}

function decisionFor(p, action) {
  const input = document.querySelector(`[data-ocr-text="${p.id}"]`);
  const text = input ? input.value.trim() : p.text;
  if (action === "accept" && text && text !== p.text) return { proposal_id: p.id, action: "edit", text };
  return { proposal_id: p.id, action };
}

// Save pending edits, then decide with the current version; take the server's document and version after.
async function decide(ctx, decisions) {
  const o = ocrState(ctx);
  const { state } = ctx;
  if (!ctx.editable || o.busy || !decisions.length) return;
  o.busy = true;
  try {
    if (state.dirty || state.saving) await save(ctx);
    if (state.dirty) { showBanner("Your pending edits are not saved yet; the suggestions wait until they are.", "error"); return; }
    const res = await api(urls().decide, "POST", { expected_version: state.version || 0, decisions });
    if (res.status === 200) {
      const decided = new Set(res.data.proposals.map((p) => p.id));
      o.proposals = o.proposals.filter((p) => !decided.has(p.id));
      if (o.active !== null && decided.has(o.active)) o.active = null;
      const ps = res.data.pass_state;
      if (ps) {
        state.doc = ps.document; state.version = ps.version; state.historyVersion = ps.history_version;
        state.status = ps.status; state.issues = ps.validation_errors || []; state.dirty = false; dropLocal(ctx);
      }
      const kept = res.data.proposals.filter((p) => p.status !== "dropped");
      if (kept.length === 1) state.selected = { col: "visual_nodes", id: kept[0].visual_id };
      hideBanner(ctx);
      render(ctx);
      const left = shown(ctx).length;
      progress(ctx, left ? `${left} suggestion${left === 1 ? "" : "s"} left.` : "No suggestions left.");
    } else if (res.status === 409) {
      showBanner(`${(res.data && res.data.message) || "Pass 1 changed on the server."} Reload the page to see the current version.`, "error");
      await loadProposals(ctx);
    } else {
      showBanner(`Not decided: ${(res.data && res.data.message) || `HTTP ${res.status}`}`, "error");
    }
  } finally {
    o.busy = false;
  }
}

function activate(ctx, id) {
  ocrState(ctx).active = id;
  renderOcr(ctx);
  const row = document.querySelector(`[data-ocr-row="${id}"]`);
  if (row) row.scrollIntoView({ block: "nearest" });
}

// Keys on Pass 1 (called by keyboard.js before its own keys): true when the key was ours.
export function ocrKey(ctx, e) {
  if (ctx.pass !== 1 || !ctx.ocr) return false;
  const o = ctx.ocr;
  const list = shown(ctx);
  if ((e.key === "t" || e.key === "T") && list.length) {
    e.preventDefault();
    const at = list.findIndex((p) => p.id === o.active);
    const next = at < 0 ? (e.shiftKey ? list.length - 1 : 0) : (at + (e.shiftKey ? list.length - 1 : 1)) % list.length;
    activate(ctx, list[next].id);
    return true;
  }
  const active = list.find((p) => p.id === o.active);
  if (!active) return false;
  if (e.key === "Enter") { e.preventDefault(); decide(ctx, [decisionFor(active, "accept")]); return true; }
  if (e.key === "Delete" || e.key === "Backspace") { e.preventDefault(); decide(ctx, [{ proposal_id: active.id, action: "drop" }]); return true; }
  return false;
}

function renderList(ctx) {
  const o = ocrState(ctx);
  const list = shown(ctx);
  const box = $("ws-ocr-list");
  box.hidden = !list.length;
  $("ws-ocr-accept-all").hidden = !list.length;
  $("ws-ocr-drop-all").hidden = !list.length;
  box.replaceChildren(...list.map((p) => {
    const input = h("input", { type: "text", class: "ws-ocr__text", value: p.text, "data-ocr-text": p.id, "aria-label": `Text of suggestion ${p.text}`, disabled: !ctx.editable });
    input.addEventListener("focus", () => { o.active = p.id; renderCanvas(ctx); markActive(ctx); });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); decide(ctx, [decisionFor(p, "accept")]); }
    });
    return h("li", { class: `ws-ocr__item${o.active === p.id ? " is-active" : ""}`, "data-ocr-row": p.id, "data-testid": "ocr-suggestion" }, [
      input,
      h("span", { class: "ws-ocr__conf muted", text: `${Math.round(p.confidence)}%`, title: "Tesseract's confidence" }),
      h("button", { type: "button", class: "btn btn--primary btn--small", text: "Accept", "data-ocr-accept": p.id, disabled: !ctx.editable, onclick: () => decide(ctx, [decisionFor(p, "accept")]) }),
      h("button", { type: "button", class: "btn btn--ghost btn--small", text: "Drop", "data-ocr-drop": p.id, disabled: !ctx.editable, onclick: () => decide(ctx, [{ proposal_id: p.id, action: "drop" }]) }),
    ]);
  }));
}
function markActive(ctx) {
  for (const row of document.querySelectorAll("[data-ocr-row]")) row.classList.toggle("is-active", Number(row.dataset.ocrRow) === ctx.ocr.active);
}

// The dashed suggestion boxes, one SVG layer over the diagram (its own, above the regions and shapes).
function renderCanvas(ctx) {
  const { canvas } = ctx;
  const img = currentImage(ctx);
  if (!img || !canvas.stage) return;
  let layer = canvas.stage.querySelector(".ws-ocr-layer");
  if (!layer) {
    layer = svg("svg", { class: "ws-ocr-layer", width: img.width, height: img.height, viewBox: `0 0 ${img.width} ${img.height}`, "data-testid": "ocr-layer" });
    canvas.stage.append(layer);
  }
  const kids = shown(ctx).map((p) => {
    const [x1, y1, x2, y2] = p.bbox_1000;
    const x = kToPx(x1, img.width); const y = kToPx(y1, img.height);
    const w = kToPx(x2, img.width) - x; const hh = kToPx(y2, img.height) - y;
    const g = svg("g", { class: `ws-ocr-box${ctx.ocr.active === p.id ? " is-active" : ""}`, "data-ocr-box": p.id });
    g.append(svg("rect", { x: x - 2, y: y - 2, width: w + 4, height: hh + 4 }));
    const label = svg("text", { x: x - 2, y: y - 5 });
    label.textContent = p.text;
    g.append(label);
    g.addEventListener("pointerdown", (e) => { e.stopPropagation(); activate(ctx, p.id); });
    return g;
  });
  layer.replaceChildren(...kids);
  canvas.stage.append(layer); // stays the top layer after Annotorious or draw.js re-append theirs
}

// Called after every canvas sync (canvas.js) and whenever the suggestions change.
export function renderOcr(ctx) {
  if (ctx.pass !== 1 || !ctx.ocr || !$("ws-ocr")) return;
  renderCanvas(ctx);
  renderList(ctx);
}
