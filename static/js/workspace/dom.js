// Small DOM helpers. No inline scripts or styles (CSP): elements are built with createElement and
// styled with classes.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else if (k === "checked" || k === "disabled" || k === "selected" || k === "hidden") el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export const $ = (id) => document.getElementById(id);
export const ids = (n) => (n || []).join(", ");
export const pad = (prefix, n) => prefix + String(n).padStart(3, "0");

export function katexInto(el, tex) {
  el.replaceChildren();
  if (!tex) return;
  if (window.katex) {
    try { window.katex.render(tex, el, { throwOnError: false, displayMode: false }); return; } catch (_) { /* fall through */ }
  }
  el.textContent = tex;
}

// A short value or label typeset for a list: text with $…$ renders its math parts; text
// that looks like TeX (a backslash, ^, _ or braces: "5.0\,\text{km}", "F_1", "30^\circ") renders whole;
// anything else (e.g. "mg", "30°", Chinese) stays plain text.
const TEX_HINT = /[\\^_{}]/;
export function texSpan(text, cls = "ws-tex") {
  const el = h("span", { class: cls });
  const value = String(text ?? "");
  if (!value) return el;
  if (value.includes("$")) {
    value.split(/(\$[^$]+\$)/).forEach((part) => {
      if (part.length > 2 && part.startsWith("$") && part.endsWith("$")) { const m = h("span", {}); katexInto(m, part.slice(1, -1)); el.append(m); } else if (part) el.append(part);
    });
  } else if (TEX_HINT.test(value)) katexInto(el, value);
  else el.textContent = value;
  return el;
}

export function isTyping(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
}
