// The curation page (templates/annotation/curation.html): draws each side's regions over the problem's images
// (boxes, and the shapes of static/js/workspace/shapes.js), lights up a row's regions on both diagrams when the row
// is hovered or focused, and takes j/k (next/previous row) and 1/2 (the first's / the second's side). Built with DOM
// calls only (no inline styles: the CSP refuses them); the form posts without any of this.
import { kToPx } from "./workspace/coords.js";
import { centerOf, radiusOf, shapeOf } from "./workspace/shapes.js";

const NS = "http://www.w3.org/2000/svg";
const payload = JSON.parse(document.getElementById("curation-payload").textContent);

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

// One region as SVG in image pixels: a box, or the shape its keypoints make.
function regionShape(node, img) {
  const px = (p) => [kToPx(p[0], img.width), kToPx(p[1], img.height)];
  const shape = shapeOf(node);
  if (shape === "circle" || shape === "arc") {
    const [cx, cy] = px(centerOf(node));
    const r = (radiusOf(node) * Math.min(img.width, img.height)) / 1000;
    return { el: svg("circle", { cx, cy, r }), line: shape === "arc" };
  }
  if (shape === "point") {
    const [cx, cy] = px(node.keypoints_1000[0]);
    return { el: svg("circle", { cx, cy, r: Math.max(4, Math.min(img.width, img.height) * 0.012) }), line: false };
  }
  if (shape) {
    const points = node.keypoints_1000.map(px).map((p) => p.join(",")).join(" ");
    return { el: svg("polyline", { points }), line: true };
  }
  const [x1, y1, x2, y2] = node.bbox_1000 || [0, 0, 0, 0];
  const [a, b] = px([x1, y1]);
  const [c, d] = px([x2, y2]);
  return { el: svg("rect", { x: a, y: b, width: Math.max(1, c - a), height: Math.max(1, d - b) }), line: false };
}

const drawn = {}; // side -> region id -> [svg elements]

function drawSide(container) {
  const side = container.dataset.side;
  const nodes = payload.sides[side] || [];
  drawn[side] = {};
  if (!payload.images.length) {
    container.append(Object.assign(document.createElement("p"), { className: "cur-empty", textContent: "This problem has no diagram." }));
    return;
  }
  for (const img of payload.images) {
    const figure = document.createElement("figure");
    figure.className = "cur-figure";
    const image = Object.assign(document.createElement("img"), { src: img.url, alt: `Diagram ${img.image_id} (${side})`, width: img.width, height: img.height });
    const layer = svg("svg", { viewBox: `0 0 ${img.width} ${img.height}`, "aria-hidden": "true" });
    for (const node of nodes.filter((n) => n.image_id === img.image_id)) {
      const { el, line } = regionShape(node, img);
      el.classList.add("cur-region", `cur-region--${side}`);
      if (line) el.classList.add("is-line");
      el.dataset.region = node.id;
      const title = svg("title", {});
      title.textContent = `${node.id} ${node.type || ""}${node.text ? ` “${node.text}”` : ""}`;
      el.append(title);
      el.addEventListener("click", () => focusRowOf(side, node.id));
      layer.append(el);
      const [x, y] = [kToPx((node.bbox_1000 || [0, 0])[0], img.width), kToPx((node.bbox_1000 || [0, 0])[1], img.height)];
      const label = svg("text", { x: x + 2, y: Math.max(12, y - 3), class: `cur-label cur-label--${side}` });
      label.textContent = node.id;
      layer.append(label);
      (drawn[side][node.id] ||= []).push(el);
    }
    const caption = document.createElement("figcaption");
    caption.textContent = `${img.image_id} · ${nodes.filter((n) => n.image_id === img.image_id).length} regions`;
    figure.append(image, layer, caption);
    container.append(figure);
  }
}

const rows = [...document.querySelectorAll("tr[data-row]")];
const byIndex = new Map(payload.rows.map((r) => [String(r.index), r]));

function highlight(row) {
  for (const side of Object.keys(drawn)) for (const els of Object.values(drawn[side])) els.forEach((el) => el.classList.remove("is-hot"));
  rows.forEach((r) => r.classList.toggle("is-hot", r === row));
  const data = row && byIndex.get(row.dataset.row);
  if (!data) return;
  for (const side of ["first", "second"]) for (const id of data[side] || []) (drawn[side]?.[id] || []).forEach((el) => el.classList.add("is-hot"));
}

function focusRowOf(side, regionId) {
  const row = rows.find((r) => (byIndex.get(r.dataset.row)?.[side] || []).includes(regionId));
  if (row) { row.focus(); row.scrollIntoView({ block: "nearest" }); }
}

function chosen(row) {
  const checked = row.querySelector("input[type=radio]:checked");
  return checked ? checked.value : "";
}

function showChoice(row) {
  const keep = chosen(row);
  row.classList.toggle("is-first", keep === "first");
  row.classList.toggle("is-second", keep === "second");
  row.classList.toggle("is-drop", keep === "drop");
}

function countChanges() {
  const out = document.getElementById("cur-changed");
  if (!out) return;
  const changed = rows.filter((r) => { const def = r.querySelector("input[type=radio][checked]"); return def && chosen(r) !== def.value; }).length;
  out.textContent = changed ? `${changed} choice${changed === 1 ? "" : "s"} changed from the defaults` : "All rows at their defaults (keep the first; drop what only the second has).";
}

// 1: the first's side, 2: the second's side (see the page's help line).
function chooseSide(row, side) {
  const kind = [...row.classList].find((c) => c.startsWith("cur-row--") && c !== "cur-row--differs")?.slice(9);
  const want = side === 1 ? (kind === "second_only" ? "drop" : "first") : (kind === "first_only" ? "drop" : "second");
  const input = row.querySelector(`input[type=radio][value="${want}"]`);
  if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
}

function typing(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" && t.type !== "radio" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
}

function setup() {
  document.querySelectorAll(".cur-diagram[data-side]").forEach(drawSide);
  for (const row of rows) {
    row.addEventListener("mouseenter", () => highlight(row));
    row.addEventListener("focusin", () => highlight(row));
    row.addEventListener("change", () => { showChoice(row); countChanges(); });
    showChoice(row);
  }
  document.querySelector("tbody")?.addEventListener("mouseleave", () => highlight(rows.find((r) => r.contains(document.activeElement)) || null));
  countChanges();
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e) || !rows.length) return;
    const current = rows.findIndex((r) => r.contains(document.activeElement));
    if (e.key === "j" || e.key === "k") {
      const next = current < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, current + (e.key === "j" ? 1 : -1)));
      rows[next].focus();
      rows[next].scrollIntoView({ block: "nearest" });
      e.preventDefault();
    } else if ((e.key === "1" || e.key === "2") && current >= 0) {
      chooseSide(rows[current], Number(e.key));
      rows[current].focus();
      e.preventDefault();
    }
  });
}

setup();
