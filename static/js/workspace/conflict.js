// The version-conflict dialog: what differs between the user's document (kept on this device) and the one
// the server has, record by record and field by field, side by side; and the choice of what to keep. Its
// default button (focused, Enter) keeps the user's work; discarding it takes an explicit click.
import { api } from "./api.js";
import { showBanner } from "./banner.js";
import { $, h } from "./dom.js";
import { render } from "./render.js";
import { setSaveState } from "./save_state.js";
import { save } from "./saving.js";
import { dropLocal } from "./storage.js";

const MAX_ROWS = 60;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// Equal as JSON whatever the key order (the server's JSON column may store keys in another order).
function sameJson(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}
const idOf = (r) => (r && typeof r === "object" ? r.id || r.step_id : undefined);

function shown(value) {
  if (value === undefined) return "—";
  if (typeof value === "string") return value === "" ? "(empty)" : value;
  return JSON.stringify(value);
}
function gist(record) {
  const words = [record.type || record.kind || record.predicate || record.step_type, record.text || record.name || record.quote || record.symbol_latex || record.description];
  return words.filter(Boolean).join(" · ") || "record";
}
function fieldsOf(a, b) {
  return [...new Set([...Object.keys(a || {}), ...Object.keys(b || {})])];
}

// [{record, field, mine, theirs}] for every difference, in document order (the user's keys first).
export function documentDiff(mine, theirs) {
  const rows = [];
  for (const key of fieldsOf(mine, theirs)) {
    const a = (mine || {})[key];
    const b = (theirs || {})[key];
    if (same(a, b)) continue;
    const label = key.replace(/_/g, " ");
    if (Array.isArray(a) || Array.isArray(b)) {
      const ours = new Map((Array.isArray(a) ? a : []).map((r, i) => [idOf(r) || `#${i + 1}`, r]));
      const server = new Map((Array.isArray(b) ? b : []).map((r, i) => [idOf(r) || `#${i + 1}`, r]));
      for (const id of new Set([...ours.keys(), ...server.keys()])) {
        const ra = ours.get(id);
        const rb = server.get(id);
        if (same(ra, rb)) continue;
        const record = `${label} ${id}`;
        if (ra === undefined) rows.push({ record, field: "whole record", mine: "(not in yours)", theirs: gist(rb) });
        else if (rb === undefined) rows.push({ record, field: "whole record", mine: gist(ra), theirs: "(not on the server)" });
        else if (typeof ra !== "object" || typeof rb !== "object") rows.push({ record, field: "value", mine: shown(ra), theirs: shown(rb) });
        else for (const f of fieldsOf(ra, rb)) if (!same(ra[f], rb[f])) rows.push({ record, field: f, mine: shown(ra[f]), theirs: shown(rb[f]) });
      }
    } else if (a && b && typeof a === "object" && typeof b === "object") {
      for (const f of fieldsOf(a, b)) if (!same(a[f], b[f])) rows.push({ record: label, field: f, mine: shown(a[f]), theirs: shown(b[f]) });
    } else rows.push({ record: "document", field: key, mine: shown(a), theirs: shown(b) });
  }
  return rows;
}

function diffTable(rows, serverLabel) {
  if (!rows.length) return h("p", { class: "muted", text: "The two versions have the same content." });
  const body = rows.slice(0, MAX_ROWS).map((r) => h("tr", {},
    h("th", { scope: "row", text: r.record }), h("td", { class: "ws-diff__field", text: r.field }),
    h("td", { class: "ws-diff__mine", text: r.mine }), h("td", { class: "ws-diff__theirs", text: r.theirs })));
  return h("div", { class: "ws-conflict-scroll" },
    h("table", { class: "ws-conflict-table", "data-testid": "conflict-diff" },
      h("caption", { text: `${rows.length} difference${rows.length === 1 ? "" : "s"}${rows.length > MAX_ROWS ? ` (the first ${MAX_ROWS} shown)` : ""}` }),
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Record" }), h("th", { scope: "col", text: "Field" }),
        h("th", { scope: "col", text: "Yours (this device)" }), h("th", { scope: "col", text: serverLabel }))),
      h("tbody", {}, body)));
}

async function copyMine(ctx, button) {
  const text = JSON.stringify(ctx.state.doc, null, 2);
  try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; } catch (_) {
    // No clipboard (plain HTTP, or refused): offer the document as a download instead.
    const a = h("a", { href: URL.createObjectURL(new Blob([text], { type: "application/json" })), download: `pass${ctx.pass}-mine.json` });
    document.body.append(a); a.click(); a.remove();
    button.textContent = "Downloaded";
  }
}

export async function showConflict(ctx) {
  const { state, payload } = ctx;
  let server = null;
  try { server = await api(payload.urls.api, "GET"); } catch (_) { server = null; }
  const dlg = $("ws-conflict");
  const theirs = server && server.status === 200 ? server.data : null;
  const unacked = state.unacked;
  state.unacked = null;
  if (theirs && unacked && sameJson(theirs.document, JSON.parse(unacked))) {
    // the newer version is this user's own save whose reply was lost (a dropped connection, a worker killed
    // after its commit): nothing to merge; carry on from it and save what was typed since
    state.version = theirs.version;
    state.dirty = true;
    save(ctx);
    return;
  }
  const serverLabel = theirs ? `Server's (v${theirs.version}${theirs.updated_by ? `, ${theirs.updated_by}` : ""})` : "Server's";
  $("ws-conflict-text").textContent = theirs
    ? `Version ${theirs.version} was saved by ${theirs.updated_by || "someone"} after you loaded version ${state.version}. Your changes are safe on this device. Here is what differs; keeping yours saves it as version ${theirs.version + 1}, and version ${theirs.version} stays in History.`
    : "The document changed on the server (it could not be loaded to compare). Your changes are safe on this device.";
  $("ws-conflict-diff").replaceChildren(diffTable(theirs ? documentDiff(state.doc, theirs.document) : [], serverLabel));
  const keep = $("ws-conflict-keep");
  const copy = $("ws-conflict-copy");
  copy.textContent = "Copy mine (JSON)";
  keep.onclick = () => {
    if (theirs) state.version = theirs.version;
    dlg.close(); state.dirty = true; save(ctx);
  };
  copy.onclick = () => copyMine(ctx, copy);
  $("ws-conflict-reload").onclick = () => {
    if (theirs) { state.doc = theirs.document; state.version = theirs.version; state.status = theirs.status; state.issues = theirs.validation_errors || []; }
    state.dirty = false; state.undo = []; state.redo = []; dropLocal(ctx); dlg.close(); render(ctx);
    showBanner(`Loaded version ${state.version} from the server; your changes were discarded.`, "ok");
  };
  // Esc closes without choosing: the work stays here, unsaved, and the next save asks again.
  dlg.oncancel = () => showBanner("Not saved: the server has a newer version. Your changes are still here; save (Ctrl+S) to choose what to keep.", "error");
  if (!dlg.open) dlg.showModal();
  keep.focus();
  setSaveState(ctx);
}
