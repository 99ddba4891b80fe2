// Mention spans (Kit §2.7, rule literal_nonoverlap_1based_v1), in Unicode code points like
// kit/passes/spans.py. The browser works in UTF-16 code units; these helpers convert.
export const MATCH_POLICY = "literal_nonoverlap_1based_v1";

export function codePointLength(text) {
  let n = 0;
  for (const _ of text) n += 1; // eslint-disable-line no-unused-vars
  return n;
}

// UTF-16 offset -> code point offset (an offset inside a surrogate pair counts the pair as before it).
export function toCodePoint(text, utf16Offset) {
  return codePointLength(text.slice(0, utf16Offset));
}

// Code point offset -> UTF-16 offset.
export function toUtf16(text, cpOffset) {
  let units = 0;
  let cps = 0;
  for (const ch of text) {
    if (cps === cpOffset) break;
    units += ch.length;
    cps += 1;
  }
  return units;
}

// All non-overlapping exact matches, left to right, as [start, end) code point offsets.
export function findExactMatches(text, quote) {
  const matches = [];
  if (!quote) return matches;
  let cursor = 0;
  for (;;) {
    const at = text.indexOf(quote, cursor);
    if (at < 0) break;
    const start = toCodePoint(text, at);
    matches.push([start, start + codePointLength(quote)]);
    cursor = at + quote.length;
  }
  return matches;
}

// {status, all_matches, span} with the Python statuses (no repair is applied here).
export function resolveSpan(text, quote, occurrence) {
  if (typeof quote !== "string" || quote === "") return { status: "structural_error", code: "quote_empty", all_matches: [], span: null };
  if (!Number.isInteger(occurrence) || occurrence < 1) return { status: "structural_error", code: "occurrence_invalid", all_matches: [], span: null };
  const all = findExactMatches(text, quote);
  if (all.length === 0) return { status: "quote_not_found", all_matches: all, span: null };
  if (occurrence <= all.length) return { status: "resolved_exact", all_matches: all, span: all[occurrence - 1] };
  if (all.length === 1) return { status: "unique_exact_repair_proposed", all_matches: all, span: null, proposed_span: all[0] };
  return { status: "ambiguous_occurrence", all_matches: all, span: null };
}

// A browser selection [utf16Start, utf16End) inside `text` -> the mention fields the kit stores.
// `addressable` is false when the selected instance is not one of the non-overlapping matches
// (e.g. the middle "aa" of "aaa"): the kit's rule cannot point at it.
export function mentionFromSelection(text, utf16Start, utf16End) {
  const quote = text.slice(utf16Start, utf16End);
  const start = toCodePoint(text, utf16Start);
  const end = toCodePoint(text, utf16End);
  const all = findExactMatches(text, quote);
  const index = all.findIndex((m) => m[0] === start);
  return {
    quote,
    start,
    end,
    occurrence: index >= 0 ? index + 1 : 0,
    matches: all.length,
    addressable: index >= 0,
  };
}
