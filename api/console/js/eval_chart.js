// Grouped bars of evaluation metrics: one group per metric, one bar per run, drawn as inline SVG.
// Only the metrics that are shares (0 to 1) are drawn, so that one axis serves them all.

import { h, s } from "./dom.js";

export const SHARE_METRICS = [
  ["r_at_2", "R@2"],
  ["r_at_5", "R@5"],
  ["r_at_10", "R@10"],
  ["mrr", "MRR"],
  ["all_at_10", "All@10"],
  ["exact_match", "Exact"],
  ["token_f1", "F1"],
  ["contains_answer", "Contains"],
  ["citation_precision", "Cit. prec."],
];
// Run colours, chosen to stay apart for colour-blind readers; they repeat past the last one.
const PALETTE = ["#1f5fbf", "#d9822b", "#2a9d8f", "#b5446e", "#6b3fb5", "#7a8b2d"];
const WIDTH = 760;
const HEIGHT = 300;
const MARGIN = { top: 14, right: 10, bottom: 40, left: 40 };
const TICKS = [0, 0.25, 0.5, 0.75, 1];
const GROUP_GAP = 0.25; // share of a group's width left empty between groups

export function colourOf(index) {
  return PALETTE[index % PALETTE.length];
}

function axis(plotH) {
  return s("g", { class: "axis" }, TICKS.map((t) => {
    const y = MARGIN.top + plotH * (1 - t);
    return s("g", {},
      s("line", { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y, y2: y }),
      s("text", { x: MARGIN.left - 6, y: y + 4, "text-anchor": "end" }, t.toFixed(2)));
  }));
}

/**
 * `runs`: [{id, name, metrics: {overall: {...}}}], in the order the legend lists them.
 * Answers a figure holding the SVG and a legend; a metric no run has is left out.
 */
export function metricsChart(runs) {
  const metrics = SHARE_METRICS.filter(([key]) => runs.some((r) => r.metrics.overall[key] !== null && r.metrics.overall[key] !== undefined));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const groupW = plotW / Math.max(metrics.length, 1);
  const barW = (groupW * (1 - GROUP_GAP)) / Math.max(runs.length, 1);
  const groups = metrics.map(([key, label], m) => {
    const x0 = MARGIN.left + m * groupW + (groupW * GROUP_GAP) / 2;
    const bars = runs.map((run, r) => {
      const value = run.metrics.overall[key];
      if (value === null || value === undefined) return null;
      const barH = plotH * Math.min(Math.max(value, 0), 1);
      return s("rect", {
        class: "bar",
        x: x0 + r * barW, y: MARGIN.top + plotH - barH, width: Math.max(barW - 1, 1), height: barH,
        fill: colourOf(r),
        dataset: { runId: run.id, metric: key, value },
      }, s("title", {}, `${run.name}: ${label} ${value.toFixed(3)}`));
    });
    return s("g", { class: "group", dataset: { metric: key } }, bars,
      s("text", { class: "label", x: x0 + (groupW * (1 - GROUP_GAP)) / 2, y: HEIGHT - MARGIN.bottom + 16, "text-anchor": "middle" }, label));
  });
  const svg = s("svg", { class: "eval-chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": "eval-chart-title" },
    s("title", { id: "eval-chart-title" }, `Metrics of ${runs.length} run(s)`), axis(plotH), groups);
  const legend = h("ul", { class: "legend", id: "eval-legend" }, runs.map((run, r) =>
    h("li", { dataset: { runId: run.id } }, s("svg", { width: 12, height: 12, "aria-hidden": "true" }, s("rect", { width: 12, height: 12, fill: colourOf(r) })), ` ${run.name}`)));
  return h("figure", { class: "chart" }, svg, legend);
}
