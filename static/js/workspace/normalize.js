// Derived fields kept consistent after every edit (bindings' evidence, anchors, provenance, ID order).
import { renumber } from "./ids.js";
import { textOf } from "./model.js";
import { resolveSpan } from "./spans.js";

function provenanceOf(visualIds, mentionIds) {
  const p = [];
  if ((visualIds || []).length) p.push("IMAGE");
  if ((mentionIds || []).length) p.push("TEXT");
  return p;
}

function normalizePass2(ctx, doc) {
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
  renumber(ctx, doc, "bindings");
  for (const b of doc.bindings) if (b.type === "same_entity_as") {
    const from = doc.physical_nodes.find((n) => n.id === b.from_id);
    b.evidence_visual_ids = from && from.visual_anchor_ids.length ? [from.visual_anchor_ids[0]] : [];
  }
}

function normalizePass3(ctx, doc) {
  // Mentions in textual order (stem first), then everything that points at them follows.
  const sec = { stem: 0, query: 1 };
  const spanStart = (m) => { const r = resolveSpan(textOf(ctx, m.section), m.quote, m.occurrence); return r.span ? r.span[0] : 1e9; };
  const ordered = [...(doc.text_mentions || [])].sort((a, b) => (sec[a.section] - sec[b.section]) || (spanStart(a) - spanStart(b)));
  doc.text_mentions = ordered;
  renumber(ctx, doc, "text_mentions");
  doc.bindings = (doc.bindings || []).filter((b) => b.from_id && b.to_id && doc.text_mentions.some((m) => m.id === b.from_id));
  for (const b of doc.bindings) { b.type = "refers_to"; b.provenance = ["TEXT"]; b.evidence_visual_ids = []; b.evidence_mention_ids = [b.from_id]; }
  renumber(ctx, doc, "bindings");
  const { earlier } = ctx;
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

export function normalize(ctx, doc) {
  const { pass } = ctx;
  if (pass === 2) normalizePass2(ctx, doc);
  if (pass === 3) normalizePass3(ctx, doc);
  if (pass === 4) {
    for (const r of doc.relations || []) r.provenance = provenanceOf(r.evidence_visual_ids, r.evidence_mention_ids);
    renumber(ctx, doc, "relations");
  }
  if (pass === 1) renumber(ctx, doc, "visual_nodes");
  if (doc.ambiguities) renumber(ctx, doc, "ambiguities");
  if (pass === 5) renumber(ctx, doc, "solution_steps");
  return doc;
}
