// The save indicator in the header and this pass's tab (the server renders the tabs).
import { $ } from "./dom.js";

// "v3" is the history's version (…/history/ lists it): autosaves by one user close together are one version,
// while the save counter sent as If-Match (state.version) grows on every save.
function shownVersion(ctx) {
  const { state, payload } = ctx;
  const n = state.historyVersion !== undefined ? state.historyVersion : payload.state.history_version;
  return n || state.version;
}
export function setSaveState(ctx) {
  const { state } = ctx;
  const el = $("ws-save");
  let text = `Saved · v${shownVersion(ctx)}`;
  let cls = "ws-save--ok";
  if (!ctx.editable) { text = state.version ? `Read only · v${shownVersion(ctx)}` : "Read only"; cls = ""; }
  else if (state.saving) { text = "Saving…"; cls = "ws-save--busy"; }
  else if (state.retryIn) { text = "Offline — kept on this device"; cls = "ws-save--error"; }
  else if (state.dirty) { text = "Unsaved changes"; cls = "ws-save--busy"; }
  else if (!state.version) { text = "Not started"; cls = ""; }
  el.textContent = text;
  el.className = `ws-save ${cls}`;
  renderTabState(ctx);
}
// Keep this pass's tab in step after a save or submit.
function renderTabState(ctx) {
  const { state, payload } = ctx;
  if (state.status === "new") return;
  const tab = document.querySelector(".ws-tab[aria-current='page']");
  if (!tab) return;
  const stateEl = tab.querySelector(".ws-tab__state");
  // stale: saved since the page loaded, or stale on load (the document, the problem or a pass it builds on changed)
  const approvedStale = state.status === "approved" && payload.state.document_sha256
    && (state.version !== payload.state.version || !payload.state.approval_is_fresh);
  const label = approvedStale ? "approval stale" : state.status;
  tab.className = `ws-tab ws-tab--${approvedStale ? "stale" : state.status}`;
  if (stateEl && stateEl.textContent !== label) stateEl.textContent = label;
}
