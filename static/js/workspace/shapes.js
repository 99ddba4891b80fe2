// The shapes a visual node draws and the bbox_1000 derived from them: the twin of kit/passes/shapes.py
// (same table, same arithmetic, so the box saved here is the box the server derives; see its docstring).
// Keypoints and the centre are per-axis 0–1000; the radius is normalized by min(W, H)/1000; -1 = absent.
// An arc runs clockwise on screen (y down) from its first keypoint to its second.

export const SHAPE_OF_TYPE = {
  point_mark: "point", line_segment: "line", arrow: "arrow", polyline: "polyline", curve: "curve",
  circle: "circle", arc: "arc", angle_mark: "angle",
};
export const TYPE_OF_SHAPE = Object.fromEntries(Object.entries(SHAPE_OF_TYPE).map(([t, s]) => [s, t]));
const KEYPOINT_COUNT = { point: [1, 1], line: [2, 2], arrow: [2, 2], polyline: [2, null], curve: [2, null], circle: [0, 0], arc: [2, 2], angle: [3, 3] };
export const ROUND_SHAPES = ["circle", "arc"];
export const MIN_SIDE = 10;
const TAU = 2 * Math.PI;

const isInt = (v) => Number.isInteger(v);
function pairs(value) {
  if (!Array.isArray(value)) return null;
  for (const p of value) if (!(Array.isArray(p) && p.length === 2 && isInt(p[0]) && isInt(p[1]))) return null;
  return value;
}
export function centerOf(node) {
  const c = node.center_1000;
  return Array.isArray(c) && c.length === 2 && isInt(c[0]) && isInt(c[1]) && c[0] >= 0 && c[1] >= 0 ? c : null;
}
export function radiusOf(node) {
  return isInt(node.radius_1000) && node.radius_1000 > 0 ? node.radius_1000 : null;
}
// The shape the node draws ("arrow", "circle", …), or null for a box.
export function shapeOf(node) {
  const shape = SHAPE_OF_TYPE[node.type];
  const points = pairs(node.keypoints_1000);
  if (!shape || !points) return null;
  const [fewest, most] = KEYPOINT_COUNT[shape];
  if (points.length < fewest || (most !== null && points.length > most)) return null;
  if (ROUND_SHAPES.includes(shape) && (!centerOf(node) || !radiusOf(node))) return null;
  return shape;
}
export function radiusExtent(radius, width, height) {
  const short = Math.min(width, height);
  return [(radius * short) / width, (radius * short) / height];
}
const tauMod = (a) => ((a % TAU) + TAU) % TAU;
// Angle of a 0–1000 point around a 0–1000 centre, measured in pixels (y down: increasing = clockwise).
export function angleAt(center, point, width, height) {
  return Math.atan2((point[1] - center[1]) * height, (point[0] - center[0]) * width);
}
export function arcSweep(center, start, end, width, height) {
  return tauMod(angleAt(center, end, width, height) - angleAt(center, start, width, height));
}
function arcExtentPoints(center, radius, start, end, width, height) {
  const [cx, cy] = center;
  const [rx, ry] = radiusExtent(radius, width, height);
  const a0 = angleAt(center, start, width, height);
  const sweep = arcSweep(center, start, end, width, height);
  const points = [start, end];
  [[cx + rx, cy], [cx, cy + ry], [cx - rx, cy], [cx, cy - ry]].forEach((p, k) => { if (tauMod((k * Math.PI) / 2 - a0) <= sweep) points.push(p); });
  return points;
}
export function extentPoints(node, width, height) {
  const shape = shapeOf(node);
  if (!shape) return [];
  const points = node.keypoints_1000;
  if (shape === "circle") {
    const c = centerOf(node); const [rx, ry] = radiusExtent(radiusOf(node), width, height);
    return [[c[0] - rx, c[1] - ry], [c[0] + rx, c[1] + ry]];
  }
  if (shape === "arc") return arcExtentPoints(centerOf(node), radiusOf(node), points[0], points[1], width, height);
  return points;
}
function axis(low, high) {
  let a = Math.max(0, Math.min(1000, Math.floor(low)));
  let b = Math.max(0, Math.min(1000, Math.ceil(high)));
  const short = MIN_SIDE - (b - a);
  if (short > 0) {
    a -= Math.floor(short / 2); b += short - Math.floor(short / 2);
    if (a < 0) { b -= a; a = 0; }
    if (b > 1000) { a -= b - 1000; b = 1000; }
  }
  return [a, b];
}
// bbox_1000 of the shape (its extent rounded outwards, clipped, each side at least MIN_SIDE); null for a box.
export function derivedBbox(node, width, height) {
  const pts = extentPoints(node, width, height);
  if (!pts.length) return null;
  const [x0, x1] = axis(Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0])));
  const [y0, y1] = axis(Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1])));
  return [x0, y0, x1, y1];
}
