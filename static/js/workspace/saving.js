// Saving (never lose work): debounced autosave with If-Match, offline retry with back-off, the
// version-conflict dialog (conflict.js), and submitting for review.
import { api } from "./api.js";
import { hideBanner, showBanner } from "./banner.js";
import { showConflict } from "./conflict.js";
import { $ } from "./dom.js";
import { blockingIssues } from "./issues.js";
import { render } from "./render.js";
import { setSaveState } from "./save_state.js";
import { dropLocal, keepLocal } from "./storage.js";

export function scheduleSave(ctx, delay = 800) {
  const { state } = ctx;
  clearTimeout(state.saveTimer);
  state.saveTimer = setTimeout(() => save(ctx), delay);
  setSaveState(ctx);
}
export async function save(ctx) {
  const { state, payload } = ctx;
  clearTimeout(state.saveTimer);
  if (!ctx.editable || !state.dirty) { setSaveState(ctx); return; }
  if (state.saving) { state.saveAgain = true; return; }
  state.saving = true;
  setSaveState(ctx);
  const sent = JSON.stringify(state.doc);
  let res;
  try {
    res = await api(payload.urls.api, "PUT", { document: state.doc }, state.version);
  } catch (_) {
    res = { status: 0, data: null };
  }
  state.saving = false;
  if (res.status === 200) {
    state.unacked = null;
    state.version = res.data.version;  // the If-Match save counter, every save
    state.historyVersion = res.data.history_version;  // the history's number: one user's autosaves share one
    state.status = res.data.status;
    state.issues = res.data.validation_errors || [];
    if (JSON.stringify(state.doc) === sent) { state.dirty = false; dropLocal(ctx); } else keepLocal(ctx);
    hideBanner(ctx);
    state.retryIn = 0;
  } else if (res.status === 409 && res.data && res.data.code === "version_conflict") {
    await showConflict(ctx);
  } else if (res.status === 0 || res.status >= 500) {
    if (res.status === 0) state.unacked = sent;  // it may have been stored: the conflict dialog checks (conflict.js)
    networkFailure(ctx, res);
    return;
  } else {
    const errors = (res.data && res.data.extra && res.data.extra.errors) || [];
    showBanner(`Not saved: ${(res.data && res.data.message) || `HTTP ${res.status}`} ${errors.map((e) => e.message).join(" ")}`, "error");
  }
  render(ctx);
  if (state.saveAgain) { state.saveAgain = false; if (state.dirty) save(ctx); }
}
// A dropped connection (status 0) or a server error: the edit stays on this device and is resent with back-off.
// A resent save whose first reply was lost is answered as stored (annotation.services._is_resent_save).
function networkFailure(ctx, res) {
  const { state } = ctx;
  state.retryIn = Math.min(30, state.retryIn ? state.retryIn * 2 : 2);
  let left = state.retryIn;
  const busy = res.status === 503;  // e.g. code database_unavailable: the server is up, its database briefly not
  const reason = busy
    ? "The server is briefly unavailable (its database is reconnecting)."
    : res.status ? `The server answered ${res.status}.` : "Cannot reach the server.";
  const retryNow = () => { clearTimeout(state.retryTimer); save(ctx); };
  const tick = () => {
    showBanner(`${reason} Your changes are kept on this device and will be saved when it answers again. Retrying in ${left} s.`, "offline", retryNow);
    if (left <= 0) { save(ctx); return; }
    left -= 1;
    state.retryTimer = setTimeout(tick, 1000);
  };
  clearTimeout(state.retryTimer);
  tick();
  setSaveState(ctx);
}
// thenNext: "Submit and next problem" opens the next problem whose same pass waits (payload.urls.next_problem).
export async function submit(ctx, { thenNext = false } = {}) {
  const { state, payload } = ctx;
  if (!state.version) state.dirty = true;  // never stored yet (e.g. a Pass 4 as consolidated): store it first
  await save(ctx);
  if (state.dirty || blockingIssues(state.issues).length) { render(ctx); return; }  // physics warnings never block
  const res = await api(payload.urls.submit, "POST", {});
  if (res.status === 200) {
    state.status = res.data.status;
    // What really happens next is said once, by the page (workspace.html #ws-next-submitted); the reload shows
    // it as the read-only submitted page.
    const next = $("ws-next-submitted-text");
    const following = thenNext && payload.urls.next_problem;
    if (following) {
      showBanner("Submitted for source review. Opening the next problem…", "ok");
      window.location.assign(following);
      return;
    }
    showBanner(`${payload.submitted_text || "Submitted for source review."} ${next ? next.textContent : ""}`.trim(), "ok");
    setTimeout(() => window.location.reload(), 1500);
  } else {
    if (res.data && res.data.extra && res.data.extra.errors) state.issues = res.data.extra.errors;
    showBanner(`Not submitted: ${(res.data && res.data.message) || res.status}`, "error");
    render(ctx);
  }
}
export { showConflict };
