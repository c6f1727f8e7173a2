// The comparison of two evaluation runs: every metric side by side with its difference, and the
// questions one run found and the other missed.

import { call } from "./api.js";
import { h } from "./dom.js";

const DIGITS = 3;

export function formatMetric(value) {
  if (value === null || value === undefined) return "–";
  // Counts (questions, tokens) read as whole numbers; shares keep their digits, 1 included.
  return Number.isInteger(value) && Math.abs(value) > 1 ? String(value) : value.toFixed(DIGITS);
}

function deltaCell(delta) {
  if (delta === null || delta === undefined) return h("td", { class: "muted" }, "–");
  const sign = delta > 0 ? "+" : "";
  return h("td", { class: delta > 0 ? "delta up" : delta < 0 ? "delta down" : "delta" }, `${sign}${formatMetric(delta)}`);
}

function rankText(rank) {
  return rank === null || rank === undefined ? "missed" : `rank ${rank}`;
}

function changedItem(q, names) {
  const winner = q.found_by === "a" ? names.a : names.b;
  const loser = q.found_by === "a" ? names.b : names.a;
  return h("li", { dataset: { questionId: q.question_id, foundBy: q.found_by } },
    h("span", { class: "question" }, q.question),
    h("span", { class: `badge ${q.found_by === "b" ? "ok" : "failed"}` }, `found by ${winner}, missed by ${loser}`),
    h("small", { class: "muted" }, ` A: ${rankText(q.a_rank)} · B: ${rankText(q.b_rank)}`));
}

/** Fetch the comparison of runs `a` and `b` of base `kbId` and answer the elements showing it. */
export async function comparison(kbId, a, b) {
  const data = await call(`/knowledge-bases/${kbId}/eval-runs/${a}/compare/${b}`);
  const names = { a: `A (${data.a.name})`, b: `B (${data.b.name})` };
  const gained = data.changed.filter((q) => q.found_by === "b").length;
  return [
    h("div", { class: "scroll" }, h("table", { id: "compare-metrics" },
      h("thead", {}, h("tr", {}, ["Metric", names.a, names.b, "B − A"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, data.metrics.map((m) => h("tr", { dataset: { metric: m.name } },
        h("td", {}, m.name), h("td", {}, formatMetric(m.a)), h("td", {}, formatMetric(m.b)), deltaCell(m.delta)))))),
    h("h3", { id: "changed-title" }, `Changed questions: ${data.changed.length} (${gained} gained by B, ${data.changed.length - gained} lost)`),
    data.changed.length
      ? h("ol", { id: "changed-questions", class: "changed", "aria-labelledby": "changed-title" }, data.changed.map((q) => changedItem(q, names)))
      : h("p", { id: "changed-questions", class: "muted" }, "No question changed: both runs found the same ones."),
  ];
}
