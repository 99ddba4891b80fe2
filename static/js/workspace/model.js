// Read-only views of the pass document and the earlier passes it builds on.

import { h, texSpan } from "./dom.js";

const PALETTE = ["#d1495b", "#2e86ab", "#3f9142", "#e08e0b", "#7b4fb8", "#0f9d9a", "#c2185b", "#5d6d7e",
  "#8d6e00", "#1565c0", "#ad1457", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e"];

export function visualNodes(ctx) {
  const { pass, earlier, state } = ctx;
  if (pass === 1 || pass === 4) return state.doc.visual_nodes || [];
  if (pass === 5) return (earlier.pass4 && earlier.pass4.visual_nodes) || [];
  return (earlier.pass1 && earlier.pass1.visual_nodes) || [];
}
export function entities(ctx) {
  const { pass, earlier, state } = ctx;
  if (pass === 2 || pass === 4) return state.doc.physical_nodes || [];
  if (pass === 3) {
    const byId = new Map(((earlier.pass2 && earlier.pass2.physical_nodes) || []).map((n) => [n.id, n]));
    for (const n of state.doc.new_or_updated_physical_nodes || []) byId.set(n.id, n);
    return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
  if (pass === 5) return (earlier.pass4 && earlier.pass4.physical_nodes) || [];
  return [];
}
export function allBindings(ctx) {
  const { pass, earlier, state } = ctx;
  if (pass === 2 || pass === 4) return state.doc.bindings || [];
  if (pass === 3) return [...((earlier.pass2 && earlier.pass2.bindings) || []), ...(state.doc.bindings || [])];
  if (pass === 5) return (earlier.pass4 && earlier.pass4.bindings) || [];
  return [];
}
export function mentions(ctx) {
  const { pass, earlier, state } = ctx;
  if (pass === 3 || pass === 4) return state.doc.text_mentions || [];
  if (pass === 5) return (earlier.pass4 && earlier.pass4.text_mentions) || [];
  return [];
}
export function currentImage(ctx) { return ctx.payload.images[ctx.state.imageIndex] || null; }
export function textOf(ctx, sectionName) {
  return (sectionName === "query" ? ctx.payload.problem.query : ctx.payload.problem.stem) || "";
}

// Whether `id` is an ID of this record kind ("visual", "physical", … as the server names them).
export function isKind(ctx, id, kind) {
  return String(id).startsWith(ctx.idPrefix[kind]);
}
export function entityColour(ctx, pid) {
  const n = parseInt(String(pid).slice(ctx.idPrefix.physical.length), 10) || 0;
  return PALETTE[(n - 1 + PALETTE.length) % PALETTE.length];
}
// visual id -> entity id (through labels/represents bindings and the nodes' own anchors)
export function regionOwners(ctx) {
  const map = new Map();
  for (const n of entities(ctx)) for (const v of n.visual_anchor_ids || []) if (!map.has(v)) map.set(v, n.id);
  for (const b of allBindings(ctx)) if ((b.type === "labels" || b.type === "represents") && !map.has(b.from_id)) map.set(b.from_id, b.to_id);
  return map;
}
export function label(ctx, node) {
  if (!node) return "";
  if (node.id && isKind(ctx, node.id, "visual")) return `${node.id} · ${node.type}${node.text ? ` “${node.text}”` : ""}`;
  if (node.id && isKind(ctx, node.id, "physical")) return `${node.id} · ${node.name || node.symbol || node.type}`;
  if (node.id && isKind(ctx, node.id, "mention")) return `${node.id} · “${node.quote}” (${node.section})`;
  if (node.id && isKind(ctx, node.id, "quantity")) return `${node.id} · ${node.kind || "quantity"} ${node.symbol_latex || ""}`;
  return node.id;
}
// The same label for the page (chips, titles, links): a region's text and a quantity's symbol typeset as
// texSpan does (plain text stays plain), never raw LaTeX. ``label`` stays the text form for <option>s.
export function labelNode(ctx, node) {
  if (!node) return "";
  if (node.id && isKind(ctx, node.id, "visual") && node.text) {
    return h("span", {}, `${node.id} · ${node.type} “`, texSpan(node.text), "”");
  }
  if (node.id && isKind(ctx, node.id, "quantity") && node.symbol_latex) {
    return h("span", {}, `${node.id} · ${node.kind || "quantity"} `, texSpan(node.symbol_latex));
  }
  return label(ctx, node);
}
