// Typeset LaTeX wherever a page lists values, labels, quantities or answers (KaTeX is vendored).
//
// Mark an element in a template with one of:
//   data-tex        its whole text is TeX:                 <span data-tex>5.0\,\text{km}</span>
//   data-tex-mixed  prose with $…$, $$…$$ or \(…\) inside: <span data-tex-mixed>I = $2\,\text{A}$</span>
// The source text stays in the element's title (hover, copy) and, if KaTeX cannot parse it, on the page.
// Runs on load and after every htmx swap; an element is typeset once.
(function () {
  "use strict";
  const DELIMITERS = /\$\$([\s\S]+?)\$\$|\$([^$\n]+?)\$|\\\(([\s\S]+?)\\\)/g;

  function typeset(el, tex) {
    const out = document.createElement("span");
    try {
      window.katex.render(tex, out, { throwOnError: true, displayMode: false, output: "html" });
      return out;
    } catch (_) {
      return null;
    }
  }

  function renderWhole(el) {
    const tex = el.textContent.trim();
    if (!tex) return;
    const out = typeset(el, tex);
    if (!out) return;
    el.title = el.title || tex;
    el.replaceChildren(...out.childNodes);
  }

  function renderMixed(el) {
    const text = el.textContent;
    DELIMITERS.lastIndex = 0;
    if (!DELIMITERS.test(text)) return;
    DELIMITERS.lastIndex = 0;
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(DELIMITERS)) {
      if (match.index > last) parts.push(document.createTextNode(text.slice(last, match.index)));
      const tex = match[1] || match[2] || match[3];
      const out = typeset(el, tex);
      parts.push(out || document.createTextNode(match[0]));
      last = match.index + match[0].length;
    }
    if (last < text.length) parts.push(document.createTextNode(text.slice(last)));
    el.title = el.title || text;
    el.replaceChildren(...parts);
  }

  function renderIn(root) {
    if (!window.katex || !root.querySelectorAll) return;
    for (const el of root.querySelectorAll("[data-tex]:not([data-tex-done])")) {
      el.setAttribute("data-tex-done", "");
      renderWhole(el);
    }
    for (const el of root.querySelectorAll("[data-tex-mixed]:not([data-tex-done])")) {
      el.setAttribute("data-tex-done", "");
      renderMixed(el);
    }
  }

  window.physalignMath = { renderIn };
  document.addEventListener("DOMContentLoaded", () => renderIn(document));
  document.addEventListener("htmx:afterSettle", (event) => renderIn(event.target || document));
})();
