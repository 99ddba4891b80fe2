// The banner above the grid: save errors, offline retries, refusals.
import { $, h } from "./dom.js";

// `onRetry`, when given, adds a "Retry now" button that calls it.
export function showBanner(text, kind, onRetry = null) {
  const b = $("ws-banner");
  b.hidden = false;
  b.className = `ws-banner ws-banner--${kind}`;
  b.replaceChildren(...[h("span", { text }), onRetry ? h("button", { type: "button", class: "btn btn--small btn--secondary", onclick: onRetry }, "Retry now") : null].filter(Boolean));
}
export function hideBanner(ctx) {
  const b = $("ws-banner");
  b.hidden = true; b.removeAttribute("data-testid"); b.replaceChildren();
  clearTimeout(ctx.state.retryTimer);
}
