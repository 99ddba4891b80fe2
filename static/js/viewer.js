// A zoomable image viewer for the pages where people read attachments.
//
// Mark each thumbnail as a link to the full-resolution image:
//   <a href="/…/V1" data-viewer data-viewer-label="Attachment V1"><img src="/…/V1" alt="Attachment V1"></a>
// and put the links of one set inside an element with data-viewer-gallery to step between them.
// Without JavaScript the link opens the image itself. With it, a click, Enter or Space opens a modal
// dialog showing the same bytes at their natural size, with zoom (buttons, + - 0 1 keys, the wheel),
// pan (drag, arrow keys), Previous/Next (buttons, PageUp/PageDown) and Esc or Close to leave; focus then
// returns to the thumbnail of the image last shown. The viewer only enlarges what the page already shows.
(function () {
  "use strict";
  const MIN_SCALE = 0.1;
  const MAX_SCALE = 16;
  const STEP = 1.25;
  const PAN_STEP = 40;

  const view = { scale: 1, x: 0, y: 0, fitted: true, items: [], index: 0, trigger: null, opener: null, token: 0 };
  let ui = null;

  function build() {
    const dialog = document.createElement("dialog");
    dialog.className = "viewer";
    dialog.id = "image-viewer";
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-labelledby", "image-viewer-title");
    dialog.setAttribute("aria-describedby", "image-viewer-help");
    dialog.innerHTML = `
      <div class="viewer__bar">
        <h2 class="viewer__title" id="image-viewer-title"></h2>
        <span class="viewer__size" id="image-viewer-size"></span>
        <div class="viewer__tools" role="toolbar" aria-label="Image viewer tools">
          <button type="button" class="viewer__btn" data-act="prev" aria-label="Previous image">‹ Prev</button>
          <span class="viewer__count" id="image-viewer-count"></span>
          <button type="button" class="viewer__btn" data-act="next" aria-label="Next image">Next ›</button>
          <button type="button" class="viewer__btn" data-act="out" aria-label="Zoom out" aria-keyshortcuts="-">−</button>
          <output class="viewer__zoom" id="image-viewer-zoom" aria-live="polite" aria-label="Zoom">100%</output>
          <button type="button" class="viewer__btn" data-act="in" aria-label="Zoom in" aria-keyshortcuts="+">+</button>
          <button type="button" class="viewer__btn" data-act="fit" aria-keyshortcuts="0">Fit</button>
          <button type="button" class="viewer__btn" data-act="actual" aria-label="Actual size (100%)" aria-keyshortcuts="1">1:1</button>
          <button type="button" class="viewer__btn viewer__btn--close" data-act="close" aria-label="Close the viewer" aria-keyshortcuts="Escape">Close ✕</button>
        </div>
      </div>
      <div class="viewer__stage" id="image-viewer-stage" tabindex="0"
           aria-label="Image: drag or use the arrow keys to move it, the wheel or + and − to zoom">
        <img class="viewer__img" id="image-viewer-img" alt="" draggable="false" hidden>
        <p class="viewer__error" id="image-viewer-error" role="alert" hidden>The image could not be loaded.</p>
      </div>
      <p class="viewer__help" id="image-viewer-help">Drag or arrow keys: move · wheel, + / −: zoom · 0: fit · 1: actual size · PageUp / PageDown: previous / next · Esc: close</p>`;
    document.body.append(dialog);
    const $ = (id) => dialog.querySelector(`#${id}`);
    ui = {
      dialog,
      title: $("image-viewer-title"),
      size: $("image-viewer-size"),
      count: $("image-viewer-count"),
      zoom: $("image-viewer-zoom"),
      stage: $("image-viewer-stage"),
      img: $("image-viewer-img"),
      error: $("image-viewer-error"),
      prev: dialog.querySelector("[data-act=prev]"),
      next: dialog.querySelector("[data-act=next]"),
    };
    dialog.addEventListener("click", onToolClick);
    dialog.addEventListener("keydown", onKey);
    dialog.addEventListener("close", onClose);
    ui.stage.addEventListener("wheel", onWheel, { passive: false });
    ui.stage.addEventListener("pointerdown", onPointerDown);
    ui.stage.addEventListener("dblclick", onDoubleClick);
    window.addEventListener("resize", () => {
      if (ui.dialog.open && loaded()) (view.fitted ? fit() : apply());
    });
  }

  // Geometry -------------------------------------------------------------------------------------------
  function loaded() {
    return !ui.img.hidden && ui.img.naturalWidth > 0;
  }

  function stageBox() {
    return { w: ui.stage.clientWidth, h: ui.stage.clientHeight };
  }

  function clampAxis(pos, size, room) {
    if (size <= room) return (room - size) / 2; // smaller than the stage: centred
    return Math.min(0, Math.max(room - size, pos)); // larger: no empty band on either side
  }

  function apply() {
    const w = ui.img.naturalWidth * view.scale;
    const h = ui.img.naturalHeight * view.scale;
    const box = stageBox();
    view.x = clampAxis(view.x, w, box.w);
    view.y = clampAxis(view.y, h, box.h);
    ui.img.style.width = `${w}px`;
    ui.img.style.height = `${h}px`;
    ui.img.style.transform = `translate(${view.x}px, ${view.y}px)`;
    ui.zoom.value = `${Math.round(view.scale * 100)}%`;
    ui.zoom.textContent = ui.zoom.value;
    ui.dialog.dataset.zoom = String(view.scale);
  }

  function fitScale() {
    const box = stageBox();
    const scale = Math.min(box.w / ui.img.naturalWidth, box.h / ui.img.naturalHeight);
    return Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
  }

  function fit() {
    view.scale = fitScale();
    view.fitted = true;
    view.x = 0;
    view.y = 0;
    apply();
  }

  // Zoom to ``scale`` keeping the image point under (px, py) (stage coordinates) where it is.
  function zoomTo(scale, px, py) {
    if (!loaded()) return;
    const box = stageBox();
    const cx = px === undefined ? box.w / 2 : px;
    const cy = py === undefined ? box.h / 2 : py;
    const next = Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
    view.x = cx - ((cx - view.x) * next) / view.scale;
    view.y = cy - ((cy - view.y) * next) / view.scale;
    view.scale = next;
    view.fitted = false;
    apply();
  }

  function pan(dx, dy) {
    if (!loaded()) return;
    view.x += dx;
    view.y += dy;
    apply();
  }

  // Showing an image -----------------------------------------------------------------------------------
  function labelOf(trigger) {
    return trigger.dataset.viewerLabel || trigger.getAttribute("aria-label") || "Image";
  }

  function show(index) {
    view.index = index;
    view.trigger = view.items[index];
    const label = labelOf(view.trigger);
    const token = ++view.token;
    ui.title.textContent = `${label} — full resolution`;
    ui.img.alt = label;
    ui.size.textContent = "";
    ui.error.hidden = true;
    ui.img.hidden = true;
    const many = view.items.length > 1;
    ui.prev.hidden = ui.next.hidden = ui.count.hidden = !many;
    ui.prev.disabled = index === 0;
    ui.next.disabled = index === view.items.length - 1;
    ui.count.textContent = many ? `${index + 1} of ${view.items.length}` : "";
    const ready = () => {
      if (token !== view.token) return;
      ui.img.hidden = false;
      ui.size.textContent = `${ui.img.naturalWidth} × ${ui.img.naturalHeight} px`;
      fit();
    };
    ui.img.onload = ready;
    ui.img.onerror = () => {
      if (token !== view.token) return;
      ui.error.hidden = false;
    };
    const src = view.trigger.getAttribute("href") || view.trigger.dataset.viewerSrc;
    if (ui.img.getAttribute("src") === src && ui.img.complete && ui.img.naturalWidth) ready();
    else ui.img.src = src;
  }

  function step(delta) {
    const index = view.index + delta;
    if (index >= 0 && index < view.items.length) show(index);
  }

  function open(trigger) {
    if (!ui) build();
    const gallery = trigger.closest("[data-viewer-gallery]");
    view.items = gallery ? Array.from(gallery.querySelectorAll("[data-viewer]")) : [trigger];
    if (!view.items.includes(trigger)) view.items = [trigger];
    view.opener = document.activeElement;
    ui.dialog.showModal();
    show(view.items.indexOf(trigger));
    ui.stage.focus();
  }

  function onClose() {
    view.token++;
    const trigger = view.trigger;
    const opener = view.opener;
    // Focus goes back to the thumbnail of the image last shown. The page may still be inert for a frame or
    // two after close, and the browser may then restore focus to what was focused when the dialog opened
    // (the first thumbnail): keep putting it back for a few frames, unless the user moved it elsewhere.
    let frames = 10;
    const back = () => {
      if (!trigger || !document.contains(trigger) || ui.dialog.open) return;
      const active = document.activeElement;
      const lost = active === null || active === document.body || active === opener;
      if (active !== trigger && lost) trigger.focus();
      if (--frames > 0) requestAnimationFrame(back);
    };
    back();
  }

  // Input ----------------------------------------------------------------------------------------------
  function onToolClick(event) {
    const button = event.target.closest("[data-act]");
    if (!button) return;
    const act = button.dataset.act;
    if (act === "close") ui.dialog.close();
    else if (act === "in") zoomTo(view.scale * STEP);
    else if (act === "out") zoomTo(view.scale / STEP);
    else if (act === "fit") loaded() && fit();
    else if (act === "actual") zoomTo(1);
    else if (act === "prev") step(-1);
    else if (act === "next") step(1);
  }

  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const panStep = event.shiftKey ? PAN_STEP * 4 : PAN_STEP;
    const actions = {
      "+": () => zoomTo(view.scale * STEP),
      "=": () => zoomTo(view.scale * STEP),
      "-": () => zoomTo(view.scale / STEP),
      _: () => zoomTo(view.scale / STEP),
      0: () => loaded() && fit(),
      1: () => zoomTo(1),
      ArrowLeft: () => pan(panStep, 0),
      ArrowRight: () => pan(-panStep, 0),
      ArrowUp: () => pan(0, panStep),
      ArrowDown: () => pan(0, -panStep),
      PageUp: () => step(-1),
      PageDown: () => step(1),
    };
    const action = actions[event.key];
    if (!action) return; // Escape is the dialog's own: it closes it and fires "close"
    event.preventDefault();
    action();
  }

  function stagePoint(event) {
    const rect = ui.stage.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  function onWheel(event) {
    event.preventDefault();
    const [px, py] = stagePoint(event);
    zoomTo(view.scale * (event.deltaY < 0 ? STEP : 1 / STEP), px, py);
  }

  function onDoubleClick(event) {
    const [px, py] = stagePoint(event);
    zoomTo(view.scale * 2, px, py);
  }

  function onPointerDown(event) {
    if (event.button !== 0 || !loaded()) return;
    event.preventDefault();
    ui.stage.focus();
    const start = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y };
    ui.stage.setPointerCapture(event.pointerId);
    ui.stage.classList.add("is-dragging");
    const move = (e) => {
      view.x = start.vx + e.clientX - start.x;
      view.y = start.vy + e.clientY - start.y;
      apply();
    };
    const up = () => {
      ui.stage.classList.remove("is-dragging");
      ui.stage.removeEventListener("pointermove", move);
      ui.stage.removeEventListener("pointerup", up);
      ui.stage.removeEventListener("pointercancel", up);
    };
    ui.stage.addEventListener("pointermove", move);
    ui.stage.addEventListener("pointerup", up);
    ui.stage.addEventListener("pointercancel", up);
  }

  // Thumbnails: a click (Enter on a link is a click) or Space opens the viewer; a modified click keeps the
  // browser's own meaning (open the image in a new tab).
  document.addEventListener("click", (event) => {
    const trigger = event.target.closest("[data-viewer]");
    if (!trigger || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    open(trigger);
  });
  document.addEventListener("keydown", (event) => {
    const trigger = event.target.closest && event.target.closest("a[data-viewer]");
    if (!trigger || event.key !== " ") return;
    event.preventDefault();
    open(trigger);
  });

  window.physalignViewer = { open };
})();
