// A source reviewer's comments on single records (annotation.source_reviews). In the workspace each comment
// shows on its record's card (fields.js card → commentList) and in the list at the top of the page, whose
// buttons select the record. On the review page the comment rows of the decision form pick their record from
// a click on a record card, and "Comment on another record" adds a row.
import { h } from "./dom.js";
import { select } from "./selection.js";

export function commentList(ctx, id) {
  const comments = (ctx.payload.record_comments || {})[id] || [];
  if (!comments.length) return null;
  return h("ul", { class: "ws-rec-comments", "data-testid": "record-comment" }, comments.map((c) =>
    h("li", {}, h("strong", { text: `${c.by || "Reviewer"}: ` }), c.text)));
}

function reviewRows() {
  const box = document.getElementById("rv-comments");
  if (!box) return;
  const add = document.getElementById("rv-comment-add");
  const rows = () => Array.from(box.querySelectorAll(".rv-comment-row"));
  add.hidden = false;
  add.addEventListener("click", () => {
    const last = rows().at(-1);
    const copy = last.cloneNode(true);
    copy.querySelector("select").value = "";
    copy.querySelector("textarea").value = "";
    last.after(copy);
    copy.querySelector("select").focus();
  });
  // A click on a record card picks it for the first row without a record (else the last row).
  document.getElementById("ws-panel").addEventListener("click", (event) => {
    const card = event.target.closest("[data-rec]");
    if (!card) return;
    const select_ = (rows().find((r) => !r.querySelector("select").value) || rows().at(-1)).querySelector("select");
    if (Array.from(select_.options).some((o) => o.value === card.dataset.rec)) select_.value = card.dataset.rec;
  });
}

export function setupComments(ctx) {
  for (const button of document.querySelectorAll("[data-rec-target]")) {
    button.addEventListener("click", () => {
      const [col, id] = button.dataset.recTarget.split(":");
      select(ctx, col, id);
      const card = document.querySelector(`[data-rec="${col}:${id}"]`);
      if (card) { card.classList.add("flash"); setTimeout(() => card.classList.remove("flash"), 1200); }
    });
  }
  reviewRows();
}
