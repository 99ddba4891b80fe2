// Typeset LaTeX wherever a page lists values, labels, quantities or answers (KaTeX is vendored).
//
// Mark an element in a template with one of:
//   data-tex        its whole text is TeX:                 <span data-tex>5.0\,\text{km}</span>
//   data-tex-mixed  prose with $…$, $$…$$ or \(…\) inside: <span data-tex-mixed>I = $2\,\text{A}$</span>
//   data-tex-auto   a value that may be either (model answers, canonical forms, transcriptions): with $…$ it is
//                   read as mixed; without, as TeX only when it carries TeX markup (a \command, ^{…} or _{…})
//                   and is not prose; plain values such as "4 N", "D" or "37°" stay as written.
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

  const TEX_MARKUP = /\\[A-Za-z]+|\\[,;:! ]|[\^_]\{/;
  // Two plain words in a row, once TeX commands and \text{…} contents are set aside: a sentence, not a value.
  const PROSE = /[A-Za-z]{3,}[\s,.;:]+[A-Za-z]{3,}/;

  function looksLikeTex(text) {
    if (!TEX_MARKUP.test(text)) return false;
    const bare = text.replace(/\\(?:text|mathrm|operatorname|mathbf|textrm)\{[^}]*\}/g, " ").replace(/\\[A-Za-z]+/g, " ");
    return !PROSE.test(bare);
  }

  function renderAuto(el) {
    const text = el.textContent;
    DELIMITERS.lastIndex = 0;
    if (DELIMITERS.test(text)) renderMixed(el);
    else if (looksLikeTex(text)) renderWhole(el);
  }

  const RENDERERS = [
    ["data-tex", renderWhole],
    ["data-tex-mixed", renderMixed],
    ["data-tex-auto", renderAuto],
  ];

  function renderIn(root) {
    if (!window.katex || !root.querySelectorAll) return;
    for (const [attribute, render] of RENDERERS) {
      const selector = `[${attribute}]:not([data-tex-done])`;
      const found = Array.from(root.querySelectorAll(selector));
      if (root.matches && root.matches(selector)) found.unshift(root); // an htmx outerHTML swap's new element
      for (const el of found) {
        el.setAttribute("data-tex-done", "");
        render(el);
      }
    }
  }

  window.physalignMath = { renderIn };
  document.addEventListener("DOMContentLoaded", () => renderIn(document));
  document.addEventListener("htmx:afterSettle", (event) => renderIn(event.target || document));
})();
