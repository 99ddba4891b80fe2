// Record IDs: the next free one, and keeping a collection contiguous (v001, v002, …) after an edit.
// The prefixes come from the server (ctx.collectionPrefix), never from literals here.
import { pad } from "./dom.js";

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

// Make one collection contiguous and follow the renames through the document (and the selection).
export function renumber(ctx, doc, col) {
  const { state } = ctx;
  const prefix = ctx.collectionPrefix[col];
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
  if (state.selected && mapping.has(state.selected.id)) state.selected.id = mapping.get(state.selected.id).slice(6);
}

export function nextId(ctx, col) {
  const prefix = ctx.collectionPrefix[col];
  let max = 0;
  for (const r of ctx.state.doc[col] || []) {
    const n = parseInt(String(r.id || r.step_id || "").slice(prefix.length), 10);
    if (n > max) max = n;
  }
  return pad(prefix, max + 1);
}
