// An SVG drawing of entities and relations; entities are focusable buttons.

import { s } from "./dom.js";
import { layout } from "./force_layout.js";

const WIDTH = 760;
const HEIGHT = 420;
const LABEL_CHARS = 24;

function label(text) {
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text;
}

function nodeTitle(node) {
  const files = node.documents.map((d) => d.file_name);
  return files.length ? `${node.name}: named in ${files.join(", ")}` : node.name;
}

/**
 * `view`: {nodes: [{id, name, matched, documents: [{file_name}]}], edges: [{source, target, type, count}]};
 * `documents` is empty for a graph not read from documents (an extraction preview).
 */
export function drawing(view, onPick) {
  const pos = layout(view.nodes.map((n) => n.id), view.edges, WIDTH, HEIGHT);
  const names = new Map(view.nodes.map((n) => [n.id, n.name]));
  const edges = view.edges.filter((r) => pos[r.source] && pos[r.target]).map((r) => {
    const a = pos[r.source];
    const b = pos[r.target];
    const times = r.count > 1 ? ` ×${r.count}` : "";
    return s("g", { class: "edge", dataset: { count: r.count } },
      s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)" }),
      s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, "text-anchor": "middle" }, r.type + times),
      s("title", {}, `${names.get(r.source)} ${r.type} ${names.get(r.target)}${r.count > 1 ? ` (${r.count} document relations)` : ""}`));
  });
  const nodes = view.nodes.map((n) => {
    const p = pos[n.id];
    const shared = n.documents.length > 1;
    const node = s("g", {
      class: `node ${n.matched ? "matched" : ""} ${shared ? "shared" : ""}`, tabindex: 0, role: "button",
      "aria-label": `Entity ${n.name}` + (n.documents.length ? `, named in ${n.documents.length} document(s): show them` : ""),
      dataset: { entityId: n.id, name: n.name, documents: n.documents.length },
      transform: `translate(${p.x},${p.y})`,
    }, s("circle", { r: n.matched ? 9 : 6 }), s("text", { x: 12, y: 4 }, label(n.name) + (shared ? ` (${n.documents.length})` : "")),
    s("title", {}, nodeTitle(n)));
    node.addEventListener("click", () => onPick(n));
    node.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); onPick(n); } });
    return node;
  });
  return s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "graph", role: "group", "aria-label": "Entities and relations" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 18, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
    edges, nodes);
}
