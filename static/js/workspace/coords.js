// Pixel <-> bbox_1000 (Kit §2.6). Same rule as annotation/workspace.py: round half up, clamp 0..1000.
// For image sides of at most 1000 px an integer-pixel box round-trips exactly.
export function pxTo1000(px, size) {
  return Math.min(1000, Math.max(0, Math.floor((px * 1000) / size + 0.5)));
}

export function kToPx(k, size) {
  return (k * size) / 1000;
}

export function kToIntPx(k, size) {
  return Math.floor((k * size) / 1000 + 0.5);
}

export function bboxFromPixels(x1, y1, x2, y2, width, height) {
  return [
    pxTo1000(Math.min(x1, x2), width), pxTo1000(Math.min(y1, y2), height),
    pxTo1000(Math.max(x1, x2), width), pxTo1000(Math.max(y1, y2), height),
  ];
}

// A pixel point as a 0–1000 keypoint, and back (per axis, as bbox_1000).
export function pointTo1000(x, y, width, height) {
  return [pxTo1000(x, width), pxTo1000(y, height)];
}
export function pointToPx(p, width, height) {
  return [kToPx(p[0], width), kToPx(p[1], height)];
}
// A radius in pixels as radius_1000 (normalized by min(W, H)/1000, as the Kit's circle locator) and back.
export function radiusTo1000(distance, width, height) {
  return Math.min(1000, Math.max(0, Math.floor((distance * 1000) / Math.min(width, height) + 0.5)));
}
export function radiusToPx(r, width, height) {
  return (r * Math.min(width, height)) / 1000;
}
