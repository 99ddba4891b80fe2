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
