// The unsaved document kept on this device (localStorage) until the server confirms it.

export function keepLocal(ctx) {
  const { state } = ctx;
  try { localStorage.setItem(ctx.storeKey, JSON.stringify({ baseVersion: state.version, doc: state.doc, at: Date.now() })); } catch (_) { /* quota: the banner still protects */ }
}
export function dropLocal(ctx) { try { localStorage.removeItem(ctx.storeKey); } catch (_) { /* ignore */ } }
export function readLocal(ctx) {
  try { return JSON.parse(localStorage.getItem(ctx.storeKey) || "null"); } catch (_) { return null; }
}
