// Zoom and pan of the diagram (a CSS transform on the stage; the stored boxes never change).
import { $, isTyping } from "./dom.js";
import { currentImage } from "./model.js";

export function applyTransform(ctx) {
  const { state } = ctx;
  ctx.canvas.stage.style.transform = `translate(${state.tx}px, ${state.ty}px) scale(${state.zoom})`;
  $("zoom-level").textContent = `${Math.round(state.zoom * 100)}%`;
}
export function fit(ctx) {
  const { state } = ctx;
  const img = currentImage(ctx);
  if (!img) return;
  const { viewport } = ctx.canvas;
  const vw = viewport.clientWidth; const vh = viewport.clientHeight;
  state.zoom = Math.min(vw / img.width, vh / img.height) * 0.96;
  state.tx = (vw - img.width * state.zoom) / 2; state.ty = (vh - img.height * state.zoom) / 2;
  applyTransform(ctx);
}
export function zoomAt(ctx, factor, cx, cy) {
  const { state } = ctx;
  const { viewport } = ctx.canvas;
  const z = Math.min(12, Math.max(0.1, state.zoom * factor));
  if (cx === undefined) { cx = viewport.clientWidth / 2; cy = viewport.clientHeight / 2; }
  state.tx = cx - ((cx - state.tx) * z) / state.zoom; state.ty = cy - ((cy - state.ty) * z) / state.zoom; state.zoom = z;
  applyTransform(ctx);
}
export function setupViewport(ctx) {
  const { state } = ctx;
  const { viewport } = ctx.canvas;
  $("zoom-in").addEventListener("click", () => zoomAt(ctx, 1.25));
  $("zoom-out").addEventListener("click", () => zoomAt(ctx, 0.8));
  $("zoom-fit").addEventListener("click", () => fit(ctx));
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = viewport.getBoundingClientRect();
    zoomAt(ctx, e.deltaY < 0 ? 1.12 : 1 / 1.12, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let pan = null; let space = false;
  window.addEventListener("keydown", (e) => { if (e.code === "Space" && !isTyping(e)) { space = true; viewport.classList.add("is-panning"); } });
  window.addEventListener("keyup", (e) => { if (e.code === "Space") { space = false; viewport.classList.remove("is-panning"); } });
  viewport.addEventListener("pointerdown", (e) => {
    const onShape = e.target.closest && e.target.closest(".a9s-annotation");
    if (space || e.button === 1 || (state.tool === "select" && !onShape && !e.target.closest(".a9s-handle, .a9s-shape-handle, .ws-shape, .ws-handle"))) {
      pan = { x: e.clientX, y: e.clientY, tx: state.tx, ty: state.ty, moved: false };
      if (space || e.button === 1) { e.preventDefault(); e.stopPropagation(); }
    }
  }, true);
  window.addEventListener("pointermove", (e) => {
    if (!pan) return;
    const dx = e.clientX - pan.x; const dy = e.clientY - pan.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) pan.moved = true;
    if (pan.moved) { state.tx = pan.tx + dx; state.ty = pan.ty + dy; applyTransform(ctx); }
  });
  window.addEventListener("pointerup", () => { pan = null; });
  window.addEventListener("resize", () => applyTransform(ctx));
}
