// PhysAlign annotation workspace (Passes 1–5). No inline scripts or styles (CSP): the page data comes
// from the json_script payload, the DOM is built with createElement, styles are classes (and CSSOM
// for the canvas transform). The pass document is the single source of truth; the canvas
// (Annotorious), the record panels and the text view are renderings of it.
import { bboxFromPixels, kToPx } from "./coords.js";
import { mentionFromSelection, resolveSpan, toUtf16 } from "./spans.js";

const P = JSON.parse(document.getElementById("ws-payload").textContent);
const PASS = P.pass_no;
const EDITABLE = P.editable && P.state.status !== "submitted" && P.state.status !== "approved";
const STORE_KEY = `physalign:ws:${P.problem.problem_id}:${PASS}`;
const PALETTE = ["#d1495b", "#2e86ab", "#3f9142", "#e08e0b", "#7b4fb8", "#0f9d9a", "#c2185b", "#5d6d7e",
  "#8d6e00", "#1565c0", "#ad1457", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e"];
const PREFIX = { visual_nodes: "v", physical_nodes: "p", new_or_updated_physical_nodes: "p", text_mentions: "m",
  quantities: "q", bindings: "b", relations: "r", constraints: "c", ambiguities: "u", solution_steps: "s" };
const RELATION_PREDICATES = ["acts_on", "applied_at", "attached_to", "connected_to", "located_at", "part_of",
  "rests_on", "pivots_about", "points_along", "lever_arm_of", "angle_between"];

const S = {
  doc: structuredClone(P.document),
  version: P.state.version,
  status: P.state.status,
  issues: P.issues || [],
  undo: [], redo: [], lastCoalesce: null, lastCommitAt: 0,
  selected: null, // {col, id}
  entity: null, // selected physical id (Pass 2/3/4 highlight)
  imageIndex: 0, tool: "select", zoom: 1, tx: 0, ty: 0,
  dirty: false, saving: false, saveAgain: false, retryIn: 0, retryTimer: null, saveTimer: null,
  lastType: "text_glyph", selection: null,
};

// ------------------------------------------------------------------ small DOM helper
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else if (k === "checked" || k === "disabled" || k === "selected" || k === "hidden") el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}
const $ = (id) => document.getElementById(id);
const ids = (n) => (n || []).join(", ");
const pad = (prefix, n) => prefix + String(n).padStart(3, "0");

function katexInto(el, tex) {
  el.replaceChildren();
  if (!tex) return;
  if (window.katex) {
    try { window.katex.render(tex, el, { throwOnError: false, displayMode: false }); return; } catch (_) { /* fall through */ }
  }
  el.textContent = tex;
}

// ------------------------------------------------------------------ document model helpers
const earlier = P.earlier || {};
function visualNodes() {
  if (PASS === 1 || PASS === 4) return S.doc.visual_nodes || [];
  if (PASS === 5) return (earlier.pass4 && earlier.pass4.visual_nodes) || [];
  return (earlier.pass1 && earlier.pass1.visual_nodes) || [];
}
function entities() {
  if (PASS === 2 || PASS === 4) return S.doc.physical_nodes || [];
  if (PASS === 3) {
    const byId = new Map(((earlier.pass2 && earlier.pass2.physical_nodes) || []).map((n) => [n.id, n]));
    for (const n of S.doc.new_or_updated_physical_nodes || []) byId.set(n.id, n);
    return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
  if (PASS === 5) return (earlier.pass4 && earlier.pass4.physical_nodes) || [];
  return [];
}
function allBindings() {
  if (PASS === 2 || PASS === 4) return S.doc.bindings || [];
  if (PASS === 3) return [...((earlier.pass2 && earlier.pass2.bindings) || []), ...(S.doc.bindings || [])];
  if (PASS === 5) return (earlier.pass4 && earlier.pass4.bindings) || [];
  return [];
}
function mentions() {
  if (PASS === 3 || PASS === 4) return S.doc.text_mentions || [];
  if (PASS === 5) return (earlier.pass4 && earlier.pass4.text_mentions) || [];
  return [];
}
function entityColour(pid) {
  const n = parseInt(String(pid).slice(1), 10) || 0;
  return PALETTE[(n - 1 + PALETTE.length) % PALETTE.length];
}
// visual id -> entity id (through labels/represents bindings and the nodes' own anchors)
function regionOwners() {
  const map = new Map();
  for (const n of entities()) for (const v of n.visual_anchor_ids || []) if (!map.has(v)) map.set(v, n.id);
  for (const b of allBindings()) if ((b.type === "labels" || b.type === "represents") && !map.has(b.from_id)) map.set(b.from_id, b.to_id);
  return map;
}
function label(node) {
  if (!node) return "";
  if (node.id && node.id[0] === "v") return `${node.id} · ${node.type}${node.text ? ` “${node.text}”` : ""}`;
  if (node.id && node.id[0] === "p") return `${node.id} · ${node.name || node.symbol || node.type}`;
  if (node.id && node.id[0] === "m") return `${node.id} · “${node.quote}” (${node.section})`;
  if (node.id && node.id[0] === "q") return `${node.id} · ${node.kind || "quantity"} ${node.symbol_latex || ""}`;
  return node.id;
}
function findById(id) {
  for (const n of [...visualNodes(), ...entities(), ...mentions(), ...(S.doc.quantities || []),
    ...(S.doc.relations || []), ...(S.doc.constraints || [])]) if (n.id === id) return n;
  return null;
}

// Rename IDs everywhere in the document (keys ending in id / ids only, so quotes are never touched).
function renameRefs(doc, mapping) {
  if (!mapping.size) return;
  const walk = (value, key) => {
    if (Array.isArray(value)) return value.map((v) => walk(v, key));
    if (value && typeof value === "object") {
      for (const k of Object.keys(value)) value[k] = walk(value[k], k);
      return value;
    }
    if (typeof value === "string" && key && /(^|_)ids?$/.test(key) && mapping.has(value)) return mapping.get(value);
    return value;
  };
  walk(doc, "");
}
// Make one collection contiguous (v001…) and follow the renames through the document.
function renumber(doc, col) {
  const prefix = PREFIX[col];
  const mapping = new Map();
  (doc[col] || []).forEach((r, i) => {
    const key = col === "solution_steps" ? "step_id" : "id";
    const want = pad(prefix, i + 1);
    if (r[key] !== want) { mapping.set(r[key], `__tmp_${want}`); r[key] = want; }
  });
  const tmp = new Map([...mapping].map(([a, b]) => [a, b]));
  renameRefs(doc, tmp);
  const fin = new Map([...tmp.values()].map((t) => [t, t.slice(6)]));
  renameRefs(doc, fin);
  if (S.selected && mapping.has(S.selected.id)) S.selected.id = mapping.get(S.selected.id).slice(6);
}
function nextId(col, extra = []) {
  const prefix = PREFIX[col];
  let max = 0;
  for (const r of [...(S.doc[col] || []), ...extra]) {
    const n = parseInt(String(r.id || r.step_id || "").slice(1), 10);
    if (n > max) max = n;
  }
  return pad(prefix, max + 1);
}
function provenanceOf(visualIds, mentionIds) {
  const p = [];
  if ((visualIds || []).length) p.push("IMAGE");
  if ((mentionIds || []).length) p.push("TEXT");
  return p;
}

// Derived fields kept consistent after every edit.
function normalize(doc) {
  if (PASS === 2) {
    doc.bindings = (doc.bindings || []).filter((b) => b.from_id && b.to_id);
    for (const b of doc.bindings) {
      b.provenance = ["IMAGE"];
      b.evidence_mention_ids = [];
      if (b.type === "same_entity_as") {
        const from = doc.physical_nodes.find((n) => n.id === b.from_id);
        b.evidence_visual_ids = from && from.visual_anchor_ids.length ? [from.visual_anchor_ids[0]] : [];
      } else b.evidence_visual_ids = [b.from_id];
    }
    for (const n of doc.physical_nodes) {
      const anchors = new Set(doc.bindings.filter((b) => b.to_id === n.id && b.type !== "same_entity_as").map((b) => b.from_id));
      n.visual_anchor_ids = [...anchors].sort();
      n.provenance = ["IMAGE"];
      n.text_mention_ids = [];
    }
    renumber(doc, "bindings");
    for (const b of doc.bindings) if (b.type === "same_entity_as") {
      const from = doc.physical_nodes.find((n) => n.id === b.from_id);
      b.evidence_visual_ids = from && from.visual_anchor_ids.length ? [from.visual_anchor_ids[0]] : [];
    }
  }
  if (PASS === 3) {
    // Mentions in textual order (stem first), then everything that points at them follows.
    const sec = { stem: 0, query: 1 };
    const textOf = (s) => (s === "query" ? P.problem.query : P.problem.stem) || "";
    const spanStart = (m) => { const r = resolveSpan(textOf(m.section), m.quote, m.occurrence); return r.span ? r.span[0] : 1e9; };
    const ordered = [...(doc.text_mentions || [])].sort((a, b) => (sec[a.section] - sec[b.section]) || (spanStart(a) - spanStart(b)));
    doc.text_mentions = ordered;
    renumber(doc, "text_mentions");
    doc.bindings = (doc.bindings || []).filter((b) => b.from_id && b.to_id && doc.text_mentions.some((m) => m.id === b.from_id));
    for (const b of doc.bindings) { b.type = "refers_to"; b.provenance = ["TEXT"]; b.evidence_visual_ids = []; b.evidence_mention_ids = [b.from_id]; }
    renumber(doc, "bindings");
    const base = new Map(((earlier.pass2 && earlier.pass2.physical_nodes) || []).map((n) => [n.id, n]));
    const byId = new Map((doc.new_or_updated_physical_nodes || []).map((n) => [n.id, n]));
    const referred = new Map();
    for (const b of doc.bindings) referred.set(b.to_id, [...(referred.get(b.to_id) || []), b.from_id]);
    const out = [];
    const allIds = new Set([...base.keys(), ...byId.keys()]);
    for (const pid of [...allIds].sort()) {
      const mentionIds = (referred.get(pid) || []).sort();
      let node = byId.get(pid);
      if (!node && !mentionIds.length) continue;
      node = structuredClone(node || base.get(pid));
      node.text_mention_ids = mentionIds;
      node.provenance = provenanceOf(node.visual_anchor_ids, mentionIds);
      if (base.has(pid) && !mentionIds.length && JSON.stringify({ ...node, provenance: base.get(pid).provenance, text_mention_ids: base.get(pid).text_mention_ids }) === JSON.stringify(base.get(pid))) continue;
      out.push(node);
    }
    doc.new_or_updated_physical_nodes = out;
    for (const q of doc.quantities || []) q.provenance = provenanceOf(q.visual_anchor_ids, q.text_mention_ids);
    for (const c of doc.constraints || []) c.provenance = provenanceOf(c.evidence_visual_ids, c.evidence_mention_ids);
  }
  if (PASS === 4) {
    for (const r of doc.relations || []) r.provenance = provenanceOf(r.evidence_visual_ids, r.evidence_mention_ids);
    renumber(doc, "relations");
  }
  if (PASS === 1) renumber(doc, "visual_nodes");
  if (doc.ambiguities) renumber(doc, "ambiguities");
  if (PASS === 5) renumber(doc, "solution_steps");
  return doc;
}

// ------------------------------------------------------------------ commits, undo/redo
function commit(mutate, opts = {}) {
  if (!EDITABLE) return;
  const before = JSON.stringify(S.doc);
  const next = structuredClone(S.doc);
  mutate(next);
  normalize(next);
  const after = JSON.stringify(next);
  if (after === before) { render(); return; }
  const now = Date.now();
  const coalesce = opts.coalesce && opts.coalesce === S.lastCoalesce && now - S.lastCommitAt < 2500;
  if (!coalesce) { S.undo.push(before); if (S.undo.length > 300) S.undo.shift(); }
  S.lastCoalesce = opts.coalesce || null;
  S.lastCommitAt = now;
  S.redo = [];
  S.doc = next;
  changed();
}
function undo() {
  if (!S.undo.length) return;
  S.redo.push(JSON.stringify(S.doc));
  S.doc = JSON.parse(S.undo.pop());
  S.lastCoalesce = null;
  changed();
}
function redo() {
  if (!S.redo.length) return;
  S.undo.push(JSON.stringify(S.doc));
  S.doc = JSON.parse(S.redo.pop());
  S.lastCoalesce = null;
  changed();
}
function changed() {
  S.dirty = true;
  keepLocal();
  render();
  scheduleSave();
}

// ------------------------------------------------------------------ saving (never lose work)
function csrfToken() {
  try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (_) { return ""; }
}
function keepLocal() {
  try { localStorage.setItem(STORE_KEY, JSON.stringify({ baseVersion: S.version, doc: S.doc, at: Date.now() })); } catch (_) { /* quota: the banner still protects */ }
}
function dropLocal() { try { localStorage.removeItem(STORE_KEY); } catch (_) { /* ignore */ } }
function scheduleSave(delay = 800) {
  clearTimeout(S.saveTimer);
  S.saveTimer = setTimeout(save, delay);
  setSaveState();
}
async function api(url, method, body, version) {
  const headers = { "Accept": "application/json", "X-CSRFToken": csrfToken() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (version !== undefined) headers["If-Match"] = `"${version}"`;
  const res = await fetch(url, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (_) { data = null; }
  return { status: res.status, data };
}
async function save() {
  clearTimeout(S.saveTimer);
  if (!EDITABLE || !S.dirty) { setSaveState(); return; }
  if (S.saving) { S.saveAgain = true; return; }
  S.saving = true;
  setSaveState();
  const sent = JSON.stringify(S.doc);
  let res;
  try {
    res = await api(P.urls.api, "PUT", { document: S.doc }, S.version);
  } catch (_) {
    res = { status: 0, data: null };
  }
  S.saving = false;
  if (res.status === 200) {
    S.version = res.data.version;
    S.status = res.data.status;
    S.issues = res.data.validation_errors || [];
    if (JSON.stringify(S.doc) === sent) { S.dirty = false; dropLocal(); } else keepLocal();
    hideBanner();
    S.retryIn = 0;
  } else if (res.status === 409 && res.data && res.data.code === "version_conflict") {
    await showConflict();
  } else if (res.status === 0 || res.status >= 500) {
    networkFailure();
    return;
  } else {
    const errors = (res.data && res.data.extra && res.data.extra.errors) || [];
    showBanner(`Not saved: ${(res.data && res.data.message) || `HTTP ${res.status}`} ${errors.map((e) => e.message).join(" ")}`, "error");
  }
  render();
  if (S.saveAgain) { S.saveAgain = false; if (S.dirty) save(); }
}
function networkFailure() {
  S.retryIn = Math.min(30, S.retryIn ? S.retryIn * 2 : 2);
  let left = S.retryIn;
  const tick = () => {
    showBanner(`Cannot reach the server. Your changes are kept on this device and will be saved when the connection returns. Retrying in ${left} s.`, "offline", true);
    if (left <= 0) { save(); return; }
    left -= 1;
    S.retryTimer = setTimeout(tick, 1000);
  };
  clearTimeout(S.retryTimer);
  tick();
  setSaveState();
}
function showBanner(text, kind, retry = false) {
  const b = $("ws-banner");
  b.hidden = false;
  b.className = `ws-banner ws-banner--${kind}`;
  b.replaceChildren(h("span", { text }), retry ? h("button", { type: "button", class: "btn btn--small btn--secondary", onclick: () => { clearTimeout(S.retryTimer); save(); } }, "Retry now") : null);
}
function hideBanner() { const b = $("ws-banner"); b.hidden = true; b.removeAttribute("data-testid"); b.replaceChildren(); clearTimeout(S.retryTimer); }
function setSaveState() {
  const el = $("ws-save");
  let text = `Saved · v${S.version}`;
  let cls = "ws-save--ok";
  if (!EDITABLE) { text = S.version ? `Read only · v${S.version}` : "Read only"; cls = ""; }
  else if (S.saving) { text = "Saving…"; cls = "ws-save--busy"; }
  else if (S.retryIn) { text = "Offline — kept on this device"; cls = "ws-save--error"; }
  else if (S.dirty) { text = "Unsaved changes"; cls = "ws-save--busy"; }
  else if (!S.version) { text = "Not started"; cls = ""; }
  el.textContent = text;
  el.className = `ws-save ${cls}`;
  renderTabState();
}
// The server renders the pass tabs; keep this pass's tab in step after a save or submit.
function renderTabState() {
  if (S.status === "new") return;
  const tab = document.querySelector(".ws-tab[aria-current='page']");
  if (!tab) return;
  const state = tab.querySelector(".ws-tab__state");
  const approvedStale = S.status === "approved" && P.state.document_sha256 && S.version !== P.state.version;
  const label = approvedStale ? "approval stale" : S.status;
  tab.className = `ws-tab ws-tab--${approvedStale ? "stale" : S.status}`;
  if (state && state.textContent !== label) state.textContent = label;
}
function summarise(doc) {
  return Object.entries(doc || {}).filter(([, v]) => Array.isArray(v)).map(([k, v]) => `${k.replace(/_/g, " ")}: ${v.length}`);
}
async function showConflict() {
  let server = null;
  try { server = await api(P.urls.api, "GET"); } catch (_) { server = null; }
  const dlg = $("ws-conflict");
  const theirs = server && server.status === 200 ? server.data : null;
  $("ws-conflict-text").textContent = theirs
    ? `Version ${theirs.version} was saved by ${theirs.updated_by || "someone"} after you loaded version ${S.version}. Your changes are safe on this device. Choose which version to keep.`
    : "The document changed on the server. Your changes are safe on this device.";
  $("ws-conflict-mine").replaceChildren(...summarise(S.doc).map((t) => h("li", { text: t })));
  $("ws-conflict-theirs").replaceChildren(...summarise(theirs && theirs.document).map((t) => h("li", { text: t })));
  $("ws-conflict-reload").onclick = () => {
    if (theirs) { S.doc = theirs.document; S.version = theirs.version; S.status = theirs.status; S.issues = theirs.validation_errors || []; }
    S.dirty = false; S.undo = []; S.redo = []; dropLocal(); dlg.close(); render();
  };
  $("ws-conflict-overwrite").onclick = () => {
    if (theirs) S.version = theirs.version;
    dlg.close(); S.dirty = true; save();
  };
  if (!dlg.open) dlg.showModal();
  setSaveState();
}
async function submit() {
  await save();
  if (S.dirty || S.issues.length) { render(); return; }
  const res = await api(P.urls.submit, "POST", {});
  if (res.status === 200) {
    S.status = res.data.status;
    showBanner("Submitted for source review. Editing again starts a new round.", "ok");
    setTimeout(() => window.location.reload(), 600);
  } else {
    if (res.data && res.data.extra && res.data.extra.errors) S.issues = res.data.extra.errors;
    showBanner(`Not submitted: ${(res.data && res.data.message) || res.status}`, "error");
    render();
  }
}

// ------------------------------------------------------------------ canvas (Annotorious v3)
let anno = null;
let shown = new Map(); // id -> geometry key on the canvas
let syncing = false;
const viewport = $("ws-viewport");
const stage = $("ws-stage");
let imgEl = null;

function currentImage() { return P.images[S.imageIndex] || null; }
function toAnnotation(node, img) {
  const [x1, y1, x2, y2] = node.bbox_1000;
  const x = kToPx(x1, img.width); const y = kToPx(y1, img.height);
  const w = kToPx(x2, img.width) - x; const hh = kToPx(y2, img.height) - y;
  return { id: node.id, bodies: [], target: { annotation: node.id, selector: { type: "RECTANGLE", geometry: { x, y, w, h: hh, bounds: { minX: x, minY: y, maxX: x + w, maxY: y + hh } } } } };
}
function regionStyle(annotation, state) {
  const owners = regionOwners();
  const owner = owners.get(annotation.id);
  const colour = owner ? entityColour(owner) : "#1f5fbf";
  const selected = (state && state.selected) || (S.selected && S.selected.id === annotation.id);
  const inEntity = S.entity && owner === S.entity;
  const dim = S.entity && !inEntity;
  return {
    fill: colour,
    fillOpacity: selected ? 0.28 : inEntity ? 0.3 : dim ? 0.04 : 0.12,
    stroke: colour,
    strokeWidth: selected || inEntity ? 3 : 1.5,
    strokeOpacity: dim ? 0.35 : 1,
  };
}
function mountCanvas() {
  if (anno) { anno.destroy(); anno = null; }
  stage.replaceChildren();
  shown = new Map();
  const img = currentImage();
  if (!img) { stage.append(h("p", { class: "ws-empty", text: "This problem has no diagram." })); return; }
  imgEl = h("img", { src: img.url, alt: `Diagram ${img.image_id}`, width: img.width, height: img.height, draggable: "false" });
  stage.append(imgEl);
  const start = () => {
    anno = window.Annotorious.createImageAnnotator(imgEl, {
      drawingEnabled: false,
      userSelectAction: PASS === 1 && EDITABLE ? "EDIT" : "SELECT",
      style: regionStyle,
    });
    anno.setDrawingTool("rectangle");
    anno.on("createAnnotation", onCreate);
    anno.on("updateAnnotation", onUpdate);
    anno.on("selectionChanged", onSelection);
    syncCanvas();
    fit();
    setTool(S.tool);
  };
  if (imgEl.complete) start(); else imgEl.addEventListener("load", start, { once: true });
}
function syncCanvas() {
  if (!anno) return;
  const img = currentImage();
  syncing = true;
  const want = new Map();
  for (const n of visualNodes()) if (n.image_id === img.image_id && Array.isArray(n.bbox_1000) && n.bbox_1000.length === 4) want.set(n.id, n);
  for (const id of [...shown.keys()]) if (!want.has(id)) { anno.removeAnnotation(id); shown.delete(id); }
  for (const [id, n] of want) {
    const key = n.bbox_1000.join(",");
    if (!shown.has(id)) { anno.addAnnotation(toAnnotation(n, img)); shown.set(id, key); }
    else if (shown.get(id) !== key) { anno.updateAnnotation(toAnnotation(n, img)); shown.set(id, key); }
  }
  anno.setStyle(regionStyle);
  const sel = S.selected && want.has(S.selected.id) ? S.selected.id : null;
  const current = (anno.getSelected() || []).map((a) => a.id);
  if (sel && !current.includes(sel) && S.tool !== "rect") anno.setSelected(sel, PASS === 1 && EDITABLE);
  if (!sel && current.length) anno.cancelSelected();
  syncing = false;
}
function bboxOf(annotation) {
  const img = currentImage();
  const g = annotation.target.selector.geometry;
  return bboxFromPixels(g.x, g.y, g.x + g.w, g.y + g.h, img.width, img.height);
}
function onCreate(annotation) {
  if (syncing) return;
  const bbox = bboxOf(annotation);
  syncing = true; anno.removeAnnotation(annotation.id); syncing = false;
  if (PASS !== 1 || !EDITABLE || bbox[0] === bbox[2] || bbox[1] === bbox[3]) return;
  addRegion(bbox);
}
function addRegion(bbox) {
  const img = currentImage();
  let newId = null;
  commit((d) => {
    newId = nextId("visual_nodes");
    d.visual_nodes.push({ id: newId, type: S.lastType, subtype: "", text: "", image_id: img.image_id, bbox_1000: bbox,
      keypoints_1000: [], center_1000: [-1, -1], radius_1000: -1, confidence: "high" });
  });
  S.createdAt = Date.now();
  select("visual_nodes", newId);
  setTool("select");
  focusField("text");
}
function onUpdate(annotation) {
  if (syncing || PASS !== 1) return;
  const bbox = bboxOf(annotation);
  shown.set(annotation.id, bbox.join(","));
  commit((d) => { const n = d.visual_nodes.find((x) => x.id === annotation.id); if (n) n.bbox_1000 = bbox; }, { coalesce: `move:${annotation.id}` });
}
function onSelection(list) {
  if (syncing) return;
  const a = list && list[0];
  // Annotorious selects its own just-drawn shape (a UUID) before or after createAnnotation replaced it
  // with a region: never treat a shape that is not one of our regions as a selection.
  if (a && !shown.has(a.id)) { setTimeout(syncCanvas, 0); return; }
  if (!a && Date.now() - (S.createdAt || 0) < 500) { setTimeout(syncCanvas, 0); return; } // the drawing's own click
  if (a) { if (!S.selected || S.selected.id !== a.id) select("visual_nodes", a.id, { fromCanvas: true }); }
  else if (S.selected && S.selected.col === "visual_nodes") { S.selected = null; render(); }
}
function setTool(tool) {
  S.tool = tool === "rect" && PASS === 1 && EDITABLE ? "rect" : "select";
  $("tool-select").setAttribute("aria-pressed", String(S.tool === "select"));
  $("tool-rect").setAttribute("aria-pressed", String(S.tool === "rect"));
  viewport.classList.toggle("is-drawing", S.tool === "rect");
  if (anno) {
    // Annotorious does not start a new shape while one is selected for editing: drop the canvas
    // selection first (the record stays selected in the panel), else the next drag does nothing.
    if (S.tool === "rect" && (anno.getSelected() || []).length) { syncing = true; anno.cancelSelected(); syncing = false; }
    anno.setDrawingEnabled(S.tool === "rect");
  }
}
function applyTransform() {
  stage.style.transform = `translate(${S.tx}px, ${S.ty}px) scale(${S.zoom})`;
  $("zoom-level").textContent = `${Math.round(S.zoom * 100)}%`;
}
function fit() {
  const img = currentImage();
  if (!img) return;
  const vw = viewport.clientWidth; const vh = viewport.clientHeight;
  S.zoom = Math.min(vw / img.width, vh / img.height) * 0.96;
  S.tx = (vw - img.width * S.zoom) / 2; S.ty = (vh - img.height * S.zoom) / 2;
  applyTransform();
}
function zoomAt(factor, cx, cy) {
  const z = Math.min(12, Math.max(0.1, S.zoom * factor));
  if (cx === undefined) { cx = viewport.clientWidth / 2; cy = viewport.clientHeight / 2; }
  S.tx = cx - ((cx - S.tx) * z) / S.zoom; S.ty = cy - ((cy - S.ty) * z) / S.zoom; S.zoom = z;
  applyTransform();
}
function setupViewport() {
  $("zoom-in").addEventListener("click", () => zoomAt(1.25));
  $("zoom-out").addEventListener("click", () => zoomAt(0.8));
  $("zoom-fit").addEventListener("click", fit);
  $("tool-select").addEventListener("click", () => setTool("select"));
  $("tool-rect").addEventListener("click", () => setTool("rect"));
  if (!(PASS === 1 && EDITABLE)) $("tool-rect").disabled = true;
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = viewport.getBoundingClientRect();
    zoomAt(e.deltaY < 0 ? 1.12 : 1 / 1.12, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let pan = null; let space = false;
  window.addEventListener("keydown", (e) => { if (e.code === "Space" && !isTyping(e)) { space = true; viewport.classList.add("is-panning"); } });
  window.addEventListener("keyup", (e) => { if (e.code === "Space") { space = false; viewport.classList.remove("is-panning"); } });
  viewport.addEventListener("pointerdown", (e) => {
    const onShape = e.target.closest && e.target.closest(".a9s-annotation");
    if (space || e.button === 1 || (S.tool === "select" && !onShape && !e.target.closest(".a9s-handle, .a9s-shape-handle"))) {
      pan = { x: e.clientX, y: e.clientY, tx: S.tx, ty: S.ty, moved: false };
      if (space || e.button === 1) { e.preventDefault(); e.stopPropagation(); }
    }
  }, true);
  window.addEventListener("pointermove", (e) => {
    if (!pan) return;
    const dx = e.clientX - pan.x; const dy = e.clientY - pan.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) pan.moved = true;
    if (pan.moved) { S.tx = pan.tx + dx; S.ty = pan.ty + dy; applyTransform(); }
  });
  window.addEventListener("pointerup", () => { pan = null; });
  window.addEventListener("resize", () => applyTransform());
}

// ------------------------------------------------------------------ selection
function select(col, id, opts = {}) {
  S.selected = id ? { col, id } : null;
  if (col === "physical_nodes" || col === "new_or_updated_physical_nodes") S.entity = id;
  render();
  const el = document.querySelector(`[data-rec="${col}:${id}"]`) || document.querySelector(`[data-rec$=":${id}"]`);
  if (el && !opts.noScroll) el.scrollIntoView({ block: "nearest" });
  if (col === "visual_nodes" && !opts.fromCanvas) {
    const n = visualNodes().find((x) => x.id === id);
    if (n) { const idx = P.images.findIndex((i) => i.image_id === n.image_id); if (idx >= 0 && idx !== S.imageIndex) { S.imageIndex = idx; mountCanvas(); renderImageTabs(); } }
  }
}
function focusField(name) {
  // After the canvas has finished its own pointer handling (it may move focus to the SVG).
  // A key pressed meanwhile (Esc, a shortcut) wins: never pull focus back into a field afterwards.
  const token = S.keyToken;
  // Nor when the user has already moved into another field (a fast click or an automated fill):
  // the late retry would otherwise steal the caret and send their typing to the wrong field.
  const go = () => {
    if (S.keyToken !== token) return;
    const active = document.activeElement;
    if (active && active.matches && active.matches("#ws-panel input, #ws-panel textarea, #ws-panel select")) return;
    const el = document.querySelector(`#ws-panel .rec.is-selected [data-field="${name}"]`) || document.querySelector(`#ws-panel [data-field="${name}"]`); if (el) { el.focus(); if (el.select) el.select(); }
  };
  setTimeout(go, 0);
  setTimeout(go, 120);
}
function isTyping(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
}
function regionsInOrder() { return visualNodes(); }
function stepRegion(delta) {
  const list = regionsInOrder();
  if (!list.length) return;
  const i = S.selected && S.selected.col === "visual_nodes" ? list.findIndex((n) => n.id === S.selected.id) : -1;
  const next = list[(i + delta + list.length) % list.length];
  select("visual_nodes", next.id);
}
function nudge(dx, dy, resize) {
  if (PASS !== 1 || !S.selected || S.selected.col !== "visual_nodes") return;
  commit((d) => {
    const n = d.visual_nodes.find((x) => x.id === S.selected.id);
    if (!n) return;
    const b = [...n.bbox_1000];
    if (resize) { b[2] = Math.min(1000, Math.max(b[0] + 1, b[2] + dx)); b[3] = Math.min(1000, Math.max(b[1] + 1, b[3] + dy)); }
    else {
      const w = b[2] - b[0]; const hh = b[3] - b[1];
      b[0] = Math.min(1000 - w, Math.max(0, b[0] + dx)); b[1] = Math.min(1000 - hh, Math.max(0, b[1] + dy));
      b[2] = b[0] + w; b[3] = b[1] + hh;
    }
    n.bbox_1000 = b;
  }, { coalesce: `nudge:${S.selected.id}:${dx}:${dy}:${resize ? 1 : 0}` });
}
function newRegionFromKeyboard() {
  if (PASS !== 1 || !EDITABLE || !currentImage()) return;
  const img = currentImage();
  const cx = (viewport.clientWidth / 2 - S.tx) / S.zoom; const cy = (viewport.clientHeight / 2 - S.ty) / S.zoom;
  const w = Math.max(20, img.width * 0.08); const hh = Math.max(14, img.height * 0.06);
  addRegion(bboxFromPixels(cx - w / 2, cy - hh / 2, cx + w / 2, cy + hh / 2, img.width, img.height));
}
function deleteSelected() {
  if (!S.selected) return;
  const { col, id } = S.selected;
  if (PASS === 1 && col === "visual_nodes") removeRecord("visual_nodes", id);
  else if (col === "physical_nodes" && PASS === 2) removeEntity(id);
  else if (S.doc[col]) removeRecord(col, id);
}
// Deleting a region (Pass 1) or entity (Pass 2) renumbers the ones after it; if a later pass refers to
// the deleted record or to one that would be renumbered, refuse and name the referencing records
// instead of silently leaving dangling references there.
function blockedByLaterPasses(col, id) {
  const refs = P.later_refs || {};
  if (!Object.keys(refs).length || !["visual_nodes", "physical_nodes"].includes(col)) return false;
  const list = S.doc[col] || [];
  const at = list.findIndex((r) => r.id === id);
  if (at < 0) return false;
  const hit = list.slice(at).filter((r) => refs[r.id]);
  if (!hit.length) return false;
  const what = hit.map((r) => `${r.id} (used by ${refs[r.id].join(", ")})`).join("; ");
  const renumber = hit.some((r) => r.id !== id) ? ` Deleting ${id} would renumber later ${col === "visual_nodes" ? "regions" : "entities"}.` : "";
  showBanner(`Cannot delete ${id}: later passes refer to it or to records after it.${renumber} Referenced: ${what}. Edit it instead (change its box or type), or remove those references in the later passes first.`, "error");
  const b = $("ws-banner"); b.setAttribute("data-testid", "delete-blocked");
  b.append(h("button", { type: "button", class: "btn btn--small btn--secondary", onclick: hideBanner }, "Dismiss"));
  return true;
}
function removeRecord(col, id) {
  if (blockedByLaterPasses(col, id)) return;
  commit((d) => { d[col] = (d[col] || []).filter((r) => (r.id || r.step_id) !== id); });
  S.selected = null;
  render();
}

// ------------------------------------------------------------------ field builders
function fieldInput(rec, col, key, opts = {}) {
  const id = `f-${col}-${rec.id || rec.step_id}-${key}`;
  const input = h(opts.multiline ? "textarea" : "input", {
    id, class: `ws-input ${opts.cls || ""}`, type: opts.multiline ? null : (opts.type || "text"), value: rec[key] ?? "",
    "data-field": key, "data-k": id, placeholder: opts.placeholder || "", disabled: !EDITABLE, spellcheck: "false",
    list: opts.list || null, rows: opts.multiline ? 3 : null, "aria-label": opts.label || key,
  });
  input.addEventListener("input", () => {
    const value = opts.type === "number" ? parseInt(input.value, 10) : input.value;
    if (opts.type === "number" && Number.isNaN(value)) return;
    commit((d) => { const r = findIn(d, col, rec.id || rec.step_id); if (r) { if (opts.path) opts.path(r, value); else r[key] = value; } }, { coalesce: id });
  });
  return input;
}
function fieldSelect(rec, col, key, options, opts = {}) {
  const id = `f-${col}-${rec.id || rec.step_id}-${key}`;
  const sel = h("select", { id, class: "ws-input", "data-field": key, "data-k": id, disabled: !EDITABLE, "aria-label": opts.label || key },
    options.map((o) => { const [v, t] = Array.isArray(o) ? o : [o, o]; return h("option", { value: v, selected: (rec[key] ?? "") === v }, t); }));
  sel.addEventListener("change", () => commit((d) => { const r = findIn(d, col, rec.id || rec.step_id); if (r) r[key] = sel.value; if (opts.after) opts.after(d, r, sel.value); }));
  return sel;
}
function findIn(d, col, id) {
  if (col === "query_target") return d.query_target;
  if (col === "__doc") return d;
  return (d[col] || []).find((r) => (r.id || r.step_id) === id);
}
function labelled(text, control, extra) {
  return h("label", { class: "ws-field" }, h("span", { class: "ws-field__label", text }), control, extra || null);
}
// A list of IDs edited as chips plus a select to add one.
function idChips(rec, col, key, choices, opts = {}) {
  const value = (col === "query_target" ? S.doc.query_target[key] : rec[key]) || [];
  const wrap = h("div", { class: "ws-chips", "data-k": `chips-${col}-${rec.id || ""}-${key}` });
  for (const v of value) {
    const c = choices.find((x) => x.id === v);
    wrap.append(h("span", { class: "chip", "data-id": v },
      c && c.id[0] === "p" ? h("span", { class: "dot", "data-colour": entityColour(v) }) : null,
      c ? label(c) : v,
      EDITABLE ? h("button", { type: "button", class: "chip__x", "aria-label": `Remove ${v}`, onclick: () => commit((d) => { const r = findIn(d, col, rec.id); r[key] = r[key].filter((x) => x !== v); }) }, "×") : null));
  }
  if (EDITABLE) {
    const rest = choices.filter((c) => !value.includes(c.id));
    const add = h("select", { class: "ws-input ws-input--add", "aria-label": opts.label || `Add to ${key}`, "data-field": `add-${key}` },
      h("option", { value: "" }, opts.placeholder || "+ add…"), rest.map((c) => h("option", { value: c.id }, label(c))));
    add.addEventListener("change", () => { if (add.value) { const v = add.value; commit((d) => { const r = findIn(d, col, rec.id); r[key] = [...(r[key] || []), v].sort(); }); } });
    wrap.append(add);
    if (opts.fromSelection && S.selected && S.selected.col === "visual_nodes" && !value.includes(S.selected.id)) {
      const vid = S.selected.id;
      wrap.append(h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": `use-region-${key}`, onclick: () => commit((d) => { const r = findIn(d, col, rec.id); r[key] = [...(r[key] || []), vid].sort(); }) }, `+ selected region ${vid}`));
    }
  }
  return wrap;
}
function colourDots(root) {
  for (const el of root.querySelectorAll("[data-colour]")) el.style.backgroundColor = el.getAttribute("data-colour");
}
function recordIssues(col, idx) {
  const prefix = `${col}[${idx}]`;
  return S.issues.filter((i) => i.path === prefix || (i.path || "").startsWith(`${prefix}.`) || (i.path || "").startsWith(`${prefix}[`));
}
function issueList(list) {
  return list.length ? h("ul", { class: "ws-rec-issues" }, list.map((i) => h("li", {}, h("code", { text: i.code }), " ", i.message))) : null;
}
function card(col, rec, idx, title, body, opts = {}) {
  const id = rec.id || rec.step_id;
  const selected = S.selected && S.selected.id === id;
  const issues = recordIssues(col, idx);
  return h("article", { class: `rec${selected ? " is-selected" : ""}${issues.length ? " has-issues" : ""}`, "data-rec": `${col}:${id}` },
    h("header", { class: "rec__head" },
      h("button", { type: "button", class: "rec__title", onclick: () => select(col, id), "aria-expanded": String(selected) }, opts.dot ? h("span", { class: "dot", "data-colour": opts.dot }) : null, title),
      EDITABLE && opts.remove !== false ? h("button", { type: "button", class: "rec__del", title: "Delete", "aria-label": `Delete ${id}`, onclick: () => (opts.onRemove ? opts.onRemove() : removeRecord(col, id)) }, "Delete") : null),
    selected || opts.open ? h("div", { class: "rec__body" }, body()) : null,
    issueList(issues));
}
function section(title, count, actions, ...children) {
  return h("section", { class: "ws-section" }, h("div", { class: "ws-section__head" }, h("h2", {}, title, count !== null ? h("span", { class: "count", text: String(count) }) : null), actions || null), ...children);
}

// ------------------------------------------------------------------ Pass 1
function renderPass1() {
  const nodes = S.doc.visual_nodes;
  const img = currentImage();
  const list = h("div", { class: "rec-list", "data-testid": "region-list" });
  nodes.forEach((n, idx) => {
    list.append(card("visual_nodes", n, idx, `${n.id} · ${n.type}${n.text ? ` · ${n.text}` : ""}${img && n.image_id !== img.image_id ? ` (${n.image_id})` : ""}`, () => {
      const preview = h("span", { class: "ws-latex" });
      katexInto(preview, n.text);
      return [
        h("div", { class: "ws-row" },
          labelled("Visual type", fieldSelect(n, "visual_nodes", "type", P.vocab.visual_types, { after: (d, r, v) => { S.lastType = v; } })),
          labelled("Subtype", fieldInput(n, "visual_nodes", "subtype", { placeholder: "optional" }))),
        labelled("Exact visible text", fieldInput(n, "visual_nodes", "text", { placeholder: n.type === "text_glyph" ? "e.g. F_1 or 30^\\circ" : "" }), h("span", { class: "ws-preview" }, "Preview: ", preview)),
        h("div", { class: "ws-row" },
          labelled("Confidence", fieldSelect(n, "visual_nodes", "confidence", P.vocab.confidence)),
          labelled("Image", fieldSelect(n, "visual_nodes", "image_id", P.images.map((i) => i.image_id)))),
        h("div", { class: "ws-row ws-row--bbox" }, ["x1", "y1", "x2", "y2"].map((k, i) => labelled(k, fieldInput(n, "visual_nodes", `bbox_${k}`, {
          type: "number", cls: "ws-input--num", label: `bbox ${k}`, path: (r, v) => { r.bbox_1000[i] = Math.max(0, Math.min(1000, v)); },
        })))),
      ];
    }));
  });
  const empty = nodes.length ? null : h("p", { class: "ws-empty", text: "No regions yet. Press R and drag on the diagram, or press N to add one with the keyboard." });
  return [
    section("Regions", nodes.length, EDITABLE ? h("div", { class: "ws-actions" },
      h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "draw", onclick: () => setTool("rect") }, "Draw (R)"),
      h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "new-region", onclick: newRegionFromKeyboard }, "Add (N)")) : null, empty, list),
    renderAmbiguities(),
  ];
}
function fixBboxInputs(root) {
  for (const input of root.querySelectorAll("input[data-field^='bbox_']")) {
    const id = input.closest("[data-rec]").getAttribute("data-rec").split(":")[1];
    const n = S.doc.visual_nodes.find((x) => x.id === id);
    const k = ["x1", "y1", "x2", "y2"].indexOf(input.getAttribute("data-field").slice(5));
    if (n && k >= 0) { input.value = n.bbox_1000[k]; input.min = 0; input.max = 1000; }
  }
}

// ------------------------------------------------------------------ Pass 2
function newEntity() {
  let pid = null;
  const col = PASS === 3 ? "new_or_updated_physical_nodes" : "physical_nodes";
  commit((d) => {
    const all = PASS === 3 ? entities() : d.physical_nodes;
    pid = pad("p", all.reduce((m, n) => Math.max(m, parseInt(n.id.slice(1), 10) || 0), 0) + 1);
    const node = { id: pid, type: "body", subtype: "", name: "", symbol: "", visual_anchor_ids: [], text_mention_ids: [], provenance: PASS === 3 ? ["TEXT"] : ["IMAGE"], confidence: "high" };
    d[col].push(node);
    if (PASS === 2 && S.selected && S.selected.col === "visual_nodes") {
      const v = visualNodes().find((x) => x.id === S.selected.id);
      d.bindings.push({ id: nextId("bindings"), type: v && v.type === "text_glyph" ? "labels" : "represents", from_id: S.selected.id, to_id: pid, provenance: ["IMAGE"], evidence_visual_ids: [S.selected.id], evidence_mention_ids: [] });
    }
  });
  select(col, pid);
  focusField("name");
}
function removeEntity(pid) {
  if (blockedByLaterPasses("physical_nodes", pid)) return;
  commit((d) => {
    d.physical_nodes = d.physical_nodes.filter((n) => n.id !== pid);
    d.bindings = d.bindings.filter((b) => b.to_id !== pid && b.from_id !== pid);
    renumber(d, "physical_nodes");
  });
  S.selected = null; S.entity = null; render();
}
function bindRegion(vid, pid, type) {
  if (!vid || !pid) return;
  const v = visualNodes().find((x) => x.id === vid);
  const t = type || (v && v.type === "text_glyph" ? "labels" : "represents");
  commit((d) => {
    d.bindings = d.bindings.filter((b) => !(b.from_id === vid && (b.type === "labels" || b.type === "represents")));
    d.bindings.push({ id: nextId("bindings"), type: t, from_id: vid, to_id: pid, provenance: ["IMAGE"], evidence_visual_ids: [vid], evidence_mention_ids: [] });
  });
}
function renderPass2() {
  const nodes = S.doc.physical_nodes;
  const regions = visualNodes();
  const owners = regionOwners();
  const selRegion = S.selected && S.selected.col === "visual_nodes" ? regions.find((v) => v.id === S.selected.id) : null;
  const regionBox = selRegion ? h("div", { class: "ws-callout", "data-testid": "selected-region" },
    h("strong", { text: label(selRegion) }),
    owners.get(selRegion.id) ? h("span", { text: ` → ${label(nodes.find((n) => n.id === owners.get(selRegion.id)))}` }) : h("span", { class: "muted", text: " · not bound yet" }),
    EDITABLE && S.entity && owners.get(selRegion.id) !== S.entity ? h("button", { type: "button", class: "btn btn--primary btn--small", "data-action": "bind", onclick: () => bindRegion(selRegion.id, S.entity) }, `Bind to ${S.entity} (B)`) : null,
    EDITABLE ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-entity-from-region", onclick: newEntity }, "New entity from this region") : null) : null;
  const list = h("div", { class: "rec-list", "data-testid": "entity-list" });
  nodes.forEach((n, idx) => {
    const bound = S.doc.bindings.filter((b) => b.to_id === n.id && b.type !== "same_entity_as");
    const same = S.doc.bindings.filter((b) => b.type === "same_entity_as" && (b.from_id === n.id || b.to_id === n.id));
    list.append(card("physical_nodes", n, idx, `${n.id} · ${n.name || "(unnamed)"}${n.symbol ? ` · ${n.symbol}` : ""} · ${n.type} · ${bound.length} region${bound.length === 1 ? "" : "s"}`, () => [
      h("div", { class: "ws-row" }, labelled("Name", fieldInput(n, "physical_nodes", "name", { placeholder: "e.g. force F1" })), labelled("Symbol", fieldInput(n, "physical_nodes", "symbol", { placeholder: "e.g. F_1" }))),
      h("div", { class: "ws-row" }, labelled("Physical type", fieldSelect(n, "physical_nodes", "type", P.vocab.physical_types)), labelled("Subtype", fieldInput(n, "physical_nodes", "subtype")), labelled("Confidence", fieldSelect(n, "physical_nodes", "confidence", P.vocab.confidence))),
      h("div", { class: "ws-sub" }, h("h3", { text: "Regions" }),
        bound.length ? h("ul", { class: "ws-bindlist" }, bound.map((b) => h("li", {},
          h("button", { type: "button", class: "linkish", onclick: () => select("visual_nodes", b.from_id) }, label(regions.find((v) => v.id === b.from_id)) || b.from_id),
          fieldSelect(b, "bindings", "type", ["labels", "represents"], { label: `binding type for ${b.from_id}` }),
          EDITABLE ? h("button", { type: "button", class: "chip__x", "aria-label": `Unbind ${b.from_id}`, onclick: () => commit((d) => { d.bindings = d.bindings.filter((x) => x.id !== b.id); }) }, "×") : null))) : h("p", { class: "muted", text: "Select a region on the diagram, then press B or use “Bind”." }),
        EDITABLE ? (() => {
          const add = h("select", { class: "ws-input ws-input--add", "aria-label": "Bind a region", "data-field": "bind-region" }, h("option", { value: "" }, "+ bind a region…"),
            regions.filter((v) => owners.get(v.id) !== n.id).map((v) => h("option", { value: v.id }, label(v))));
          add.addEventListener("change", () => bindRegion(add.value, n.id));
          return add;
        })() : null),
      h("div", { class: "ws-sub" }, h("h3", { text: "Same entity as" }),
        same.length ? h("ul", { class: "ws-bindlist" }, same.map((b) => h("li", {}, `${b.from_id} ≡ ${b.to_id}`, EDITABLE ? h("button", { type: "button", class: "chip__x", "aria-label": "Remove identity", onclick: () => commit((d) => { d.bindings = d.bindings.filter((x) => x.id !== b.id); }) }, "×") : null))) : null,
        EDITABLE ? (() => {
          const add = h("select", { class: "ws-input ws-input--add", "aria-label": "Merge identity with", "data-field": "same-as" }, h("option", { value: "" }, "+ same entity as…"),
            nodes.filter((o) => o.id !== n.id).map((o) => h("option", { value: o.id }, label(o))));
          add.addEventListener("change", () => { const other = add.value; if (other) commit((d) => { d.bindings.push({ id: nextId("bindings"), type: "same_entity_as", from_id: n.id, to_id: other, provenance: ["IMAGE"], evidence_visual_ids: [], evidence_mention_ids: [] }); }); });
          return add;
        })() : null),
    ], { dot: entityColour(n.id), onRemove: () => removeEntity(n.id) }));
  });
  return [
    regionBox,
    section("Entities", nodes.length, EDITABLE ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-entity", onclick: newEntity }, "New entity (E)") : null,
      nodes.length ? null : h("p", { class: "ws-empty", text: "Create the physical entities (bodies, forces, pivots…), then bind the regions that label or depict them." }), list),
    section("Unbound regions", regions.filter((v) => !owners.has(v.id)).length, null,
      h("div", { class: "ws-chips" }, regions.filter((v) => !owners.has(v.id)).map((v) => h("button", { type: "button", class: "chip chip--btn", onclick: () => select("visual_nodes", v.id) }, label(v))))),
    renderAmbiguities(),
  ];
}

// ------------------------------------------------------------------ Pass 3
function textOf(sectionName) { return (sectionName === "query" ? P.problem.query : P.problem.stem) || ""; }
function addMention(role) {
  const sel = S.selection;
  if (!sel || !sel.quote) return;
  let mid = null;
  commit((d) => {
    const tmp = `m9${String(d.text_mentions.length + 1).padStart(3, "0")}`;
    d.text_mentions.push({ id: tmp, section: sel.section, quote: sel.quote, occurrence: sel.occurrence || 1, role });
    if (role === "quantity") d.quantities.push({ id: nextId("quantities"), kind: "", symbol_latex: "", value_latex: "", unit_latex: "", owner_id: "", visual_anchor_ids: [], text_mention_ids: [tmp], provenance: ["TEXT"] });
    if (role === "constraint") d.constraints.push({ id: nextId("constraints"), kind: "", subject_ids: [], value_text: sel.quote, provenance: ["TEXT"], evidence_visual_ids: [], evidence_mention_ids: [tmp] });
    if (role === "query_target") d.query_target.mention_id = tmp;
    normalize(d);
    const m = d.text_mentions.find((x) => x.section === sel.section && x.quote === sel.quote && x.occurrence === (sel.occurrence || 1));
    mid = m && m.id;
  });
  S.selection = null;
  window.getSelection().removeAllRanges();
  if (role === "quantity") { const q = S.doc.quantities[S.doc.quantities.length - 1]; select("quantities", q.id); focusField("kind"); }
  else if (role === "constraint") { const c = S.doc.constraints[S.doc.constraints.length - 1]; select("constraints", c.id); focusField("kind"); }
  else if (mid) select("text_mentions", mid);
}
function selectionBox() {
  const sel = S.selection;
  if (!sel) return h("div", { class: "ws-callout ws-callout--quiet", "data-testid": "selection-box" }, "Select words in the problem text (left) to create a mention.");
  const warn = !sel.addressable ? "This exact instance cannot be addressed by the kit's rule (it overlaps an earlier match). Select a different instance or a longer quote."
    : sel.matches > 1 ? `Ambiguous quote: it occurs ${sel.matches} times; this is occurrence ${sel.occurrence}. Consider a longer quote.` : "";
  return h("div", { class: "ws-callout", "data-testid": "selection-box" },
    h("div", {}, h("strong", { text: `“${sel.quote}”` }), ` · ${sel.section} · occurrence ${sel.occurrence} of ${sel.matches} · code points [${sel.start}, ${sel.end})`),
    warn ? h("p", { class: "ws-warn", "data-testid": "span-warning", text: warn }) : null,
    EDITABLE && sel.addressable ? h("div", { class: "ws-actions" }, "Add as: ",
      ["entity", "quantity", "constraint", "query_target", "relation", "other"].map((r) => h("button", { type: "button", class: `btn btn--small ${r === "quantity" ? "btn--primary" : "btn--secondary"}`, "data-action": `mention-${r}`, onclick: () => addMention(r) }, r.replace("_", " ")))) : null);
}
function setRefersTo(mid, pid) {
  commit((d) => {
    d.bindings = d.bindings.filter((b) => b.from_id !== mid);
    if (pid) d.bindings.push({ id: nextId("bindings"), type: "refers_to", from_id: mid, to_id: pid, provenance: ["TEXT"], evidence_visual_ids: [], evidence_mention_ids: [mid] });
  });
}
function renderPass3() {
  const ents = entities();
  const ms = S.doc.text_mentions;
  const regions = visualNodes();
  const entityOptions = [["", "— unresolved —"], ...ents.map((n) => [n.id, label(n)])];
  const mentionList = h("div", { class: "rec-list", "data-testid": "mention-list" });
  ms.forEach((m, idx) => {
    const r = resolveSpan(textOf(m.section), m.quote, m.occurrence);
    const ref = S.doc.bindings.find((b) => b.from_id === m.id);
    mentionList.append(card("text_mentions", m, idx, `${m.id} · “${m.quote}” · ${m.role}${ref ? ` → ${ref.to_id}` : ""}`, () => [
      h("p", { class: `ws-span ws-span--${r.status}` }, `${m.section}, occurrence ${m.occurrence}: ${r.status.replace(/_/g, " ")}${r.span ? ` [${r.span[0]}, ${r.span[1]})` : ""} · ${r.all_matches.length} match${r.all_matches.length === 1 ? "" : "es"}`),
      h("div", { class: "ws-row" }, labelled("Role", fieldSelect(m, "text_mentions", "role", P.vocab.mention_roles)),
        labelled("Refers to entity", (() => {
          const s = h("select", { class: "ws-input", "data-field": "refers_to", disabled: !EDITABLE, "aria-label": "Refers to" }, entityOptions.map(([v, t]) => h("option", { value: v, selected: (ref ? ref.to_id : "") === v }, t)));
          s.addEventListener("change", () => setRefersTo(m.id, s.value));
          return s;
        })())),
    ]));
  });
  const mentionChoices = ms;
  const qList = h("div", { class: "rec-list", "data-testid": "quantity-list" });
  S.doc.quantities.forEach((q, idx) => {
    const owner = ents.find((n) => n.id === q.owner_id);
    qList.append(card("quantities", q, idx, `${q.id} · ${q.kind || "(kind?)"} ${q.symbol_latex || ""}${q.value_latex ? ` = ${q.value_latex}` : ""} ${q.unit_latex || ""} → ${owner ? label(owner) : "owner?"}`, () => {
      const preview = h("span", { class: "ws-latex" });
      katexInto(preview, [q.symbol_latex, q.value_latex ? `= ${q.value_latex}` : "", q.unit_latex ? `\\,${q.unit_latex}` : ""].join(" ").trim());
      return [
        h("div", { class: "ws-row" }, labelled("Kind", fieldInput(q, "quantities", "kind", { placeholder: "e.g. force magnitude", list: "ws-kinds" })), labelled("Owner", fieldSelect(q, "quantities", "owner_id", entityOptions))),
        h("div", { class: "ws-row" }, labelled("Symbol (LaTeX)", fieldInput(q, "quantities", "symbol_latex", { placeholder: "F_1" })), labelled("Value (LaTeX)", fieldInput(q, "quantities", "value_latex", { placeholder: "3" })), labelled("Unit (LaTeX)", fieldInput(q, "quantities", "unit_latex", { placeholder: "\\text{N}" }))),
        h("p", { class: "ws-preview" }, "Preview: ", preview),
        labelled("Glyph anchors (regions)", idChips(q, "quantities", "visual_anchor_ids", regions, { fromSelection: true, placeholder: "+ region…" })),
        labelled("Mention anchors", idChips(q, "quantities", "text_mention_ids", mentionChoices, { placeholder: "+ mention…" })),
      ];
    }, { dot: owner ? entityColour(owner.id) : null }));
  });
  const cList = h("div", { class: "rec-list" });
  S.doc.constraints.forEach((c, idx) => {
    cList.append(card("constraints", c, idx, `${c.id} · ${c.kind || "(kind?)"} · ${c.value_text || ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Kind", fieldInput(c, "constraints", "kind", { placeholder: "e.g. static_equilibrium" })), labelled("Value text", fieldInput(c, "constraints", "value_text"))),
      labelled("Subjects", idChips(c, "constraints", "subject_ids", ents)),
      labelled("Evidence regions", idChips(c, "constraints", "evidence_visual_ids", regions, { fromSelection: true })),
      labelled("Evidence mentions", idChips(c, "constraints", "evidence_mention_ids", mentionChoices)),
    ]));
  });
  const qt = S.doc.query_target;
  const qtCard = h("div", { class: "rec is-selected", "data-rec": "query_target:" },
    h("div", { class: "rec__body" },
      h("div", { class: "ws-row" },
        labelled("Query mention", fieldSelect(qt, "query_target", "mention_id", [["", "— none —"], ...ms.filter((m) => m.section === "query").map((m) => [m.id, label(m)])])),
        labelled("Target kind", fieldInput(qt, "query_target", "target_kind", { placeholder: "e.g. torque" })),
        labelled("Target symbol", fieldInput(qt, "query_target", "target_symbol_latex", { placeholder: "\\tau" }))),
      labelled("Target entities", idChips(qt, "query_target", "target_node_ids", ents)),
      labelled("Location entities", idChips(qt, "query_target", "location_node_ids", ents))),
    issueList(S.issues.filter((i) => (i.path || "").startsWith("query_target"))));
  return [
    selectionBox(),
    section("Mentions", ms.length, null, mentionList),
    section("Quantities", S.doc.quantities.length, EDITABLE ? h("button", { type: "button", class: "btn btn--ghost btn--small", "data-action": "new-quantity", onclick: () => { commit((d) => { d.quantities.push({ id: nextId("quantities"), kind: "", symbol_latex: "", value_latex: "", unit_latex: "", owner_id: "", visual_anchor_ids: S.selected && S.selected.col === "visual_nodes" ? [S.selected.id] : [], text_mention_ids: [], provenance: [] }); }); select("quantities", S.doc.quantities[S.doc.quantities.length - 1].id); focusField("kind"); } }, "New quantity") : null, qList),
    section("Constraints", S.doc.constraints.length, EDITABLE ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: () => { commit((d) => { d.constraints.push({ id: nextId("constraints"), kind: "", subject_ids: [], value_text: "", provenance: [], evidence_visual_ids: [], evidence_mention_ids: [] }); }); select("constraints", S.doc.constraints[S.doc.constraints.length - 1].id); } }, "New constraint") : null, cList),
    section("Query target", null, null, qtCard),
    section("Entities", ents.length, EDITABLE ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: newEntity }, "New entity") : null,
      h("div", { class: "ws-chips" }, ents.map((n) => h("button", { type: "button", class: `chip chip--btn${S.entity === n.id ? " is-on" : ""}`, onclick: () => { S.entity = S.entity === n.id ? null : n.id; render(); } }, h("span", { class: "dot", "data-colour": entityColour(n.id) }), label(n))))),
    renderAmbiguities(),
  ];
}
function renderText() {
  const box = $("ws-text");
  const parts = [];
  const sections = PASS === 3 ? ["stem", "query"] : ["stem", "query"];
  for (const sec of sections) {
    const text = textOf(sec);
    if (!text) continue;
    const p = h("p", { class: "ws-textsec", "data-section": sec });
    // highlight mentions (code point spans -> UTF-16)
    const spans = [];
    for (const m of mentions()) if (m.section === sec) { const r = resolveSpan(text, m.quote, m.occurrence); if (r.span) spans.push({ s: toUtf16(text, r.span[0]), e: toUtf16(text, r.span[1]), m }); }
    spans.sort((a, b) => a.s - b.s);
    let at = 0;
    for (const sp of spans) {
      if (sp.s < at) continue;
      p.append(text.slice(at, sp.s));
      const q = (S.doc.quantities || []).find((x) => (x.text_mention_ids || []).includes(sp.m.id));
      const ref = allBindings().find((b) => b.type === "refers_to" && b.from_id === sp.m.id);
      const owner = q ? q.owner_id : ref ? ref.to_id : "";
      const mark = h("mark", { class: `ws-mention${S.selected && S.selected.id === sp.m.id ? " is-selected" : ""}`, "data-mention": sp.m.id, title: `${sp.m.id} · ${sp.m.role}`, "data-colour-border": owner ? entityColour(owner) : "" }, text.slice(sp.s, sp.e));
      mark.addEventListener("click", () => select("text_mentions", sp.m.id));
      p.append(mark);
      at = sp.e;
    }
    p.append(text.slice(at));
    parts.push(h("div", { class: "ws-textblock" }, h("h3", { text: sec === "stem" ? "Statement" : "Question" }), p));
  }
  if ((P.problem.options || []).length) parts.push(h("div", { class: "ws-textblock" }, h("h3", { text: "Options" }), h("ul", { class: "ws-options" }, P.problem.options.map((o) => h("li", {}, h("strong", { text: `${o.id}. ` }), o.text)))));
  if (PASS === 5 && P.solution !== undefined) parts.push(h("div", { class: "ws-textblock ws-solution" }, h("h3", { text: "Solution (shown in Pass 5 only)" }), h("p", { class: "ws-pre", text: P.solution })));
  if (!parts.length) parts.push(h("p", { class: "muted", text: "This problem has no text." }));
  box.replaceChildren(h("h2", { class: "ws-text__title", text: PASS === 3 ? "Problem text — select words to create a mention" : "Problem text" }), ...parts);
  for (const el of box.querySelectorAll("[data-colour-border]")) if (el.getAttribute("data-colour-border")) el.style.borderBottomColor = el.getAttribute("data-colour-border");
}
function readSelection() {
  if (PASS !== 3) return;
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return;
  const range = sel.getRangeAt(0);
  const secEl = range.startContainer.parentElement && range.startContainer.parentElement.closest("[data-section]");
  const endEl = range.endContainer.parentElement && range.endContainer.parentElement.closest("[data-section]");
  if (!secEl || secEl !== endEl) return;
  const offset = (node, off) => { const r = document.createRange(); r.selectNodeContents(secEl); r.setEnd(node, off); return r.toString().length; };
  const s = offset(range.startContainer, range.startOffset); const e = offset(range.endContainer, range.endOffset);
  const section = secEl.getAttribute("data-section");
  const text = textOf(section);
  if (e <= s) return;
  S.selection = { section, ...mentionFromSelection(text, s, e) };
  renderPanel();
}

// ------------------------------------------------------------------ Pass 4
function consolidate() {
  commit((d) => {
    const c = structuredClone(P.consolidated);
    for (const k of ["visual_nodes", "physical_nodes", "text_mentions", "quantities", "bindings", "constraints", "query_target"]) d[k] = c[k];
    if (!d.domain) d.domain = c.domain;
  });
}
function renderPass4() {
  const ents = entities();
  const regions = visualNodes();
  const ms = mentions();
  const qs = S.doc.quantities || [];
  const c = P.consolidated;
  const stale = ["visual_nodes", "physical_nodes", "text_mentions", "quantities", "bindings", "constraints", "query_target"].some((k) => JSON.stringify(c[k]) !== JSON.stringify(S.doc[k]));
  const rList = h("div", { class: "rec-list", "data-testid": "relation-list" });
  (S.doc.relations || []).forEach((r, idx) => {
    rList.append(card("relations", r, idx, `${r.id} · ${r.subject_id || "?"} ${r.predicate || "?"} ${r.object_id || "?"}${r.quantity_id ? ` (${r.quantity_id})` : ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Subject", fieldSelect(r, "relations", "subject_id", [["", "—"], ...ents.map((n) => [n.id, label(n)])])),
        labelled("Predicate", fieldInput(r, "relations", "predicate", { list: "ws-predicates", placeholder: "acts_on" })),
        labelled("Object", fieldSelect(r, "relations", "object_id", [["", "—"], ...ents.map((n) => [n.id, label(n)])]))),
      h("div", { class: "ws-row" }, labelled("Quantity", fieldSelect(r, "relations", "quantity_id", [["", "— none —"], ...qs.map((q) => [q.id, label(q)])])), labelled("Confidence", fieldSelect(r, "relations", "confidence", P.vocab.confidence))),
      labelled("Evidence regions", idChips(r, "relations", "evidence_visual_ids", regions, { fromSelection: true })),
      labelled("Evidence mentions", idChips(r, "relations", "evidence_mention_ids", ms)),
    ]));
  });
  const summary = h("div", { class: "ws-summary" },
    h("h3", { text: "Entities and what they own" }),
    h("ul", { class: "ws-owned" }, ents.map((n) => h("li", {}, h("span", { class: "dot", "data-colour": entityColour(n.id) }),
      h("button", { type: "button", class: "linkish", onclick: () => { S.entity = S.entity === n.id ? null : n.id; render(); } }, label(n)),
      h("span", { class: "muted", text: ` · ${n.type} · regions ${ids(n.visual_anchor_ids) || "—"}${(n.text_mention_ids || []).length ? ` · mentions ${ids(n.text_mention_ids)}` : ""}` }),
      qs.filter((q) => q.owner_id === n.id).length ? h("span", { class: "ws-owned__q", text: ` owns ${qs.filter((q) => q.owner_id === n.id).map((q) => q.symbol_latex || q.id).join(", ")}` }) : null))),
    h("p", { class: "muted", text: `${regions.length} regions · ${ms.length} mentions · ${qs.length} quantities · ${(S.doc.bindings || []).length} bindings · ${(S.doc.constraints || []).length} constraints · query target ${S.doc.query_target && S.doc.query_target.mention_id ? S.doc.query_target.mention_id : "—"}` }));
  return [
    h("div", { class: `ws-callout${stale ? " ws-callout--warn" : ""}`, "data-testid": "consolidate-box" },
      stale ? "G_obs differs from Passes 1–3 as saved. " : "G_obs matches Passes 1–3. ",
      EDITABLE ? h("button", { type: "button", class: "btn btn--small btn--secondary", "data-action": "consolidate", onclick: consolidate }, "Rebuild from Passes 1–3") : null,
      h("span", { class: "muted", text: " Relations, ambiguities and the domain are kept." })),
    section("Domain", null, null, fieldSelect(S.doc, "__doc", "domain", P.vocab.domains, { label: "Domain" })),
    section("Relations", (S.doc.relations || []).length, EDITABLE ? h("button", { type: "button", class: "btn btn--secondary btn--small", "data-action": "new-relation", onclick: () => { commit((d) => { d.relations.push({ id: nextId("relations"), predicate: "", subject_id: S.entity || "", object_id: "", quantity_id: "", provenance: [], evidence_visual_ids: S.selected && S.selected.col === "visual_nodes" ? [S.selected.id] : [], evidence_mention_ids: [], confidence: "high" }); }); select("relations", S.doc.relations[S.doc.relations.length - 1].id); focusField("predicate"); } }, "New relation") : null, rList),
    section("Consolidated graph", null, null, summary),
    renderAmbiguities(),
  ];
}

// ------------------------------------------------------------------ Pass 5
function renderPass5() {
  const g = earlier.pass4 || {};
  const list = h("div", { class: "rec-list" });
  (S.doc.solution_steps || []).forEach((st, idx) => {
    list.append(card("solution_steps", st, idx, `${st.step_id} · ${st.step_type} · ${(st.text || "").slice(0, 50)}`, () => [
      labelled("Step text", fieldInput(st, "solution_steps", "text", { multiline: true })),
      labelled("Step type", fieldSelect(st, "solution_steps", "step_type", P.vocab.step_types)),
      labelled("Uses nodes", idChips(st, "solution_steps", "uses_obs_node_ids", [...(g.physical_nodes || []), ...(g.visual_nodes || [])])),
      labelled("Uses quantities", idChips(st, "solution_steps", "uses_obs_quantity_ids", g.quantities || [])),
      labelled("Uses relations", idChips(st, "solution_steps", "uses_obs_relation_ids", g.relations || [])),
      labelled("Uses constraints", idChips(st, "solution_steps", "uses_obs_constraint_ids", g.constraints || [])),
    ]));
  });
  return [
    section("Solution steps", (S.doc.solution_steps || []).length, EDITABLE ? h("button", { type: "button", class: "btn btn--secondary btn--small", onclick: () => { commit((d) => { d.solution_steps.push({ step_id: pad("s", d.solution_steps.length + 1), text: "", step_type: "read_given", uses_obs_node_ids: [], uses_obs_quantity_ids: [], uses_obs_relation_ids: [], uses_obs_constraint_ids: [] }); }); } }, "New step") : null, list),
    section("Final answer", null, null, fieldInput(S.doc, "__doc", "final_answer", { label: "Final answer" })),
  ];
}

// ------------------------------------------------------------------ ambiguities (all passes)
function renderAmbiguities() {
  const list = h("div", { class: "rec-list" });
  (S.doc.ambiguities || []).forEach((u, idx) => {
    list.append(card("ambiguities", u, idx, `${u.id} · ${u.scope || "scope?"} · ${u.description || ""}`, () => [
      h("div", { class: "ws-row" }, labelled("Scope", fieldInput(u, "ambiguities", "scope", { placeholder: "e.g. owner" })), labelled("Description", fieldInput(u, "ambiguities", "description"))),
      labelled("Candidates", idChips(u, "ambiguities", "candidate_ids", [...entities(), ...visualNodes()])),
      labelled("Evidence regions", idChips(u, "ambiguities", "evidence_visual_ids", visualNodes(), { fromSelection: true })),
      labelled("Evidence mentions", idChips(u, "ambiguities", "evidence_mention_ids", mentions())),
    ]));
  });
  return h("details", { class: "ws-section ws-amb", open: (S.doc.ambiguities || []).length ? true : null },
    h("summary", {}, `Ambiguities (${(S.doc.ambiguities || []).length})`),
    h("p", { class: "muted", text: "Record anything the evidence cannot settle. Any ambiguity blocks this problem's probes." }),
    EDITABLE ? h("button", { type: "button", class: "btn btn--ghost btn--small", onclick: () => commit((d) => { d.ambiguities.push({ id: nextId("ambiguities"), scope: "", description: "", candidate_ids: [], evidence_visual_ids: [], evidence_mention_ids: [] }); }) }, "Add ambiguity") : null,
    list);
}

// ------------------------------------------------------------------ issues panel
function issueTarget(path) {
  const m = /^([a-z_]+)\[(\d+)\]/.exec(path || "");
  if (!m) return path && path.startsWith("query_target") ? { col: "query_target", id: "" } : null;
  const rec = (S.doc[m[1]] || [])[parseInt(m[2], 10)];
  return rec ? { col: m[1], id: rec.id || rec.step_id } : null;
}
function renderIssues() {
  const box = $("ws-issues");
  const n = S.issues.length;
  const items = S.issues.map((i) => {
    const t = issueTarget(i.path);
    return h("li", {}, h("button", { type: "button", class: "ws-issue", disabled: !t, onclick: () => { if (t) { select(t.col, t.id); const el = document.querySelector(`[data-rec="${t.col}:${t.id}"]`); if (el) { el.classList.add("flash"); setTimeout(() => el.classList.remove("flash"), 1200); } } } },
      h("code", { text: i.code }), h("span", { class: "ws-issue__path", text: i.path || "document" }), h("span", { text: i.message })));
  });
  box.replaceChildren(...[h("h2", {}, n ? `${n} validation issue${n === 1 ? "" : "s"}` : "No validation issues", n ? null : h("span", { class: "ws-okmark", text: " ✓" })),
    n ? h("p", { class: "muted", text: "Submitting is blocked until every issue is fixed. Click an issue to jump to its record." }) : h("p", { class: "muted", text: "This document passes the validator and can be submitted." }),
    n ? h("ul", { class: "ws-issue-list", "data-testid": "issues" }, items) : null].filter(Boolean));
  box.className = `ws-issues${n ? " has-issues" : " is-clean"}`;
}

// ------------------------------------------------------------------ render
function renderPanel() {
  const panel = $("ws-panel");
  const active = document.activeElement;
  const key = active && active.getAttribute && active.getAttribute("data-k");
  const caret = key && active.selectionStart !== undefined ? [active.selectionStart, active.selectionEnd] : null;
  const scroller = $("ws-side"); const scroll = scroller.scrollTop;
  const body = PASS === 1 ? renderPass1() : PASS === 2 ? renderPass2() : PASS === 3 ? renderPass3() : PASS === 4 ? renderPass4() : renderPass5();
  const datalists = [h("datalist", { id: "ws-predicates" }, RELATION_PREDICATES.map((p) => h("option", { value: p }))),
    h("datalist", { id: "ws-kinds" }, ["force", "mass", "length", "distance", "angle", "torque", "velocity", "acceleration", "time", "charge", "current", "resistance", "voltage", "field_strength", "other"].map((p) => h("option", { value: p })))];
  panel.replaceChildren(...body.flat().filter(Boolean), ...datalists);
  if (PASS === 1) fixBboxInputs(panel);
  colourDots(panel);
  scroller.scrollTop = scroll;
  if (key) {
    const el = panel.querySelector(`[data-k="${CSS.escape(key)}"]`);
    if (el && el !== document.activeElement) { el.focus(); if (caret && el.setSelectionRange) try { el.setSelectionRange(caret[0], caret[1]); } catch (_) { /* number inputs */ } }
  }
}
function renderHeader() {
  $("ws-undo").disabled = !S.undo.length; $("ws-redo").disabled = !S.redo.length;
  const st = $("ws-doc-status");
  st.textContent = S.status === "new" ? "not started" : S.status;
  st.className = `ws-status ws-status--${S.status}`;
  const submitBtn = $("ws-submit");
  const blocked = !EDITABLE || S.issues.length > 0 || S.status === "submitted" || S.status === "approved";
  submitBtn.disabled = blocked;
  submitBtn.textContent = S.status === "submitted" ? "Submitted" : S.status === "approved" ? "Approved" : S.issues.length ? `Fix ${S.issues.length} issue${S.issues.length === 1 ? "" : "s"} to submit` : "Submit for review";
  setSaveState();
}
function renderImageTabs() {
  const box = $("ws-image-tabs");
  box.replaceChildren(...(P.images.length > 1 ? P.images.map((img, i) => h("button", { type: "button", class: "tool", "aria-pressed": String(i === S.imageIndex), onclick: () => { S.imageIndex = i; mountCanvas(); renderImageTabs(); } }, img.image_id)) : [h("span", { class: "ws-imgname", text: P.images[0] ? `${P.images[0].image_id} · ${P.images[0].width}×${P.images[0].height}px` : "no image" })]));
}
function renderHint() {
  const hint = {
    1: "Draw a box around every label, arrow and object (R, then drag). Type the exact visible text of text glyphs.",
    2: "Create an entity (E), then select its regions on the diagram and bind them (B). Colours show which entity owns a region.",
    3: "Select words in the text to create mentions; give every quantity its owner and its glyph or mention anchors.",
    4: "Check the consolidated graph, add relations, and fix every validation issue; then submit.",
    5: "Align each solution step with the observations it uses.",
  }[PASS];
  $("ws-hint").textContent = EDITABLE ? hint : `Read only (${S.status}). ${P.state.review_note ? `Reviewer note: ${P.state.review_note}` : ""}`;
  $("ws-help-pass").textContent = hint;
}
function render() {
  renderPanel();
  renderHeader();
  renderIssues();
  renderText();
  syncCanvas();
}

// ------------------------------------------------------------------ keyboard
function onKey(e) {
  S.keyToken = (S.keyToken || 0) + 1;
  const mod = e.ctrlKey || e.metaKey;
  const k = e.key;
  if (mod && (k === "z" || k === "Z")) { e.preventDefault(); e.stopImmediatePropagation(); if (e.shiftKey) redo(); else undo(); return; }
  if (mod && (k === "y" || k === "Y")) { e.preventDefault(); e.stopImmediatePropagation(); redo(); return; }
  if (mod && (k === "s" || k === "S")) { e.preventDefault(); save(); return; }
  if (k === "Escape") {
    if (isTyping(e)) { e.target.blur(); viewport.focus(); return; }
    if (S.tool === "rect") { setTool("select"); if (anno) anno.cancelDrawing(); return; }
    S.selected = null; S.entity = null; if (anno) anno.cancelSelected(); render(); return;
  }
  if (isTyping(e) || mod || e.altKey && !k.startsWith("Arrow")) return;
  if ($("ws-help").open || $("ws-conflict").open) return;
  const step = e.shiftKey ? 10 : 1;
  switch (k) {
    case "?": e.preventDefault(); $("ws-help").showModal(); break;
    case "r": case "R": setTool("rect"); break;
    case "v": case "V": setTool("select"); break;
    case "n": case "N": e.preventDefault(); newRegionFromKeyboard(); break;
    case "e": case "E": if (EDITABLE && (PASS === 2 || PASS === 3)) { e.preventDefault(); newEntity(); } break;
    case "b": case "B": if (PASS === 2 && S.selected && S.selected.col === "visual_nodes" && S.entity) bindRegion(S.selected.id, S.entity); break;
    case "j": case "J": stepRegion(1); break;
    case "k": case "K": stepRegion(-1); break;
    case "Delete": case "Backspace": if (EDITABLE) { e.preventDefault(); deleteSelected(); } break;
    case "Enter": if (S.selected) { const el = document.querySelector("#ws-panel .rec.is-selected .rec__body input, #ws-panel .rec.is-selected .rec__body select"); if (el) { e.preventDefault(); el.focus(); } } break;
    case "+": case "=": zoomAt(1.25); break;
    case "-": zoomAt(0.8); break;
    case "0": fit(); break;
    case "ArrowLeft": if (S.selected && S.selected.col === "visual_nodes" && PASS === 1) { e.preventDefault(); nudge(-step, 0, e.altKey); } break;
    case "ArrowRight": if (S.selected && S.selected.col === "visual_nodes" && PASS === 1) { e.preventDefault(); nudge(step, 0, e.altKey); } break;
    case "ArrowUp": if (S.selected && S.selected.col === "visual_nodes" && PASS === 1) { e.preventDefault(); nudge(0, -step, e.altKey); } break;
    case "ArrowDown": if (S.selected && S.selected.col === "visual_nodes" && PASS === 1) { e.preventDefault(); nudge(0, step, e.altKey); } break;
    default: break;
  }
}

// ------------------------------------------------------------------ start
function restoreLocal() {
  let saved = null;
  try { saved = JSON.parse(localStorage.getItem(STORE_KEY) || "null"); } catch (_) { saved = null; }
  if (!saved || !EDITABLE || JSON.stringify(saved.doc) === JSON.stringify(S.doc)) { if (saved) dropLocal(); return; }
  if (saved.baseVersion === S.version) {
    S.undo.push(JSON.stringify(S.doc));
    S.doc = saved.doc;
    S.dirty = true;
    showBanner("Restored changes from this device that had not reached the server; saving them now.", "ok");
    scheduleSave(300);
  } else {
    S.doc = saved.doc;
    S.dirty = true;
    showConflict();
  }
}
function start() {
  if (PASS === 4 && !P.state.exists && EDITABLE) S.doc = structuredClone(P.consolidated);
  if (PASS !== 4 || P.state.exists) normalize(S.doc);
  if (PASS === 4 && !P.state.exists && EDITABLE) { S.dirty = true; scheduleSave(400); }
  window.addEventListener("keydown", onKey, true);
  document.addEventListener("mouseup", () => setTimeout(readSelection, 0));
  document.addEventListener("keyup", (e) => { if (e.shiftKey) readSelection(); });
  $("ws-undo").addEventListener("click", undo);
  $("ws-redo").addEventListener("click", redo);
  $("ws-submit").addEventListener("click", submit);
  $("ws-help-open").addEventListener("click", () => $("ws-help").showModal());
  $("ws-help-close").addEventListener("click", () => $("ws-help").close());
  window.addEventListener("beforeunload", (e) => { if (S.dirty) { keepLocal(); e.preventDefault(); } });
  window.addEventListener("online", () => { if (S.dirty) save(); });
  setupViewport();
  renderImageTabs();
  renderHint();
  restoreLocal();
  render();
  const boot = () => { mountCanvas(); };
  if (window.Annotorious) boot(); else window.addEventListener("load", boot, { once: true });
  document.documentElement.setAttribute("data-ws-ready", "1");
  window.__ws = { S, save, undo, redo };
}
start();
