// An SVG drawing of entities and relations; entities are focusable buttons.

import { s } from "./dom.js";
import { layout } from "./force_layout.js";

const WIDTH = 760;
const HEIGHT = 420;
const LABEL_CHARS = 24;

function label(text) {
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text;
}

/** `result`: {entities: [{id, name, matched}], relations: [{source, target, type}]}. */
export function drawing(result, onPick) {
  const pos = layout(result.entities.map((e) => e.id), result.relations, WIDTH, HEIGHT);
  const names = new Map(result.entities.map((e) => [e.id, e.name]));
  const edges = result.relations.filter((r) => pos[r.source] && pos[r.target]).map((r) => {
    const a = pos[r.source];
    const b = pos[r.target];
    return s("g", { class: "edge" },
      s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)" }),
      s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, "text-anchor": "middle" }, r.type),
      s("title", {}, `${names.get(r.source)} ${r.type} ${names.get(r.target)}`));
  });
  const nodes = result.entities.map((e) => {
    const p = pos[e.id];
    const node = s("g", {
      class: `node ${e.matched ? "matched" : ""}`, tabindex: 0, role: "button",
      "aria-label": `Entity ${e.name}: show its source chunks`, dataset: { entityId: e.id, name: e.name },
      transform: `translate(${p.x},${p.y})`,
    }, s("circle", { r: e.matched ? 9 : 6 }), s("text", { x: 12, y: 4 }, label(e.name)));
    node.addEventListener("click", () => onPick(e));
    node.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); onPick(e); } });
    return node;
  });
  return s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "graph", role: "group", "aria-label": "Entities and relations" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 18, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
    edges, nodes);
}
