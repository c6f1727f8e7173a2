// Graph view: one node per entity of a base (or of one document), from the graph-view endpoint
// (graph-search's answer with the per-document nodes of one entity merged by the server), drawn
// with a force layout and listed; a click on an entity shows the documents naming it and the
// chunks it was read from.

import { call } from "../api.js";
import { openChunk } from "../chunk_dialog.js";
import { attempt, field, fill, h, toast } from "../dom.js";
import { drawing } from "../graph_drawing.js";

function truncation(t) {
  const cut = Object.entries(t).filter(([, v]) => v).map(([k]) => k);
  return cut.length ? h("p", { class: "warn", id: "graph-truncated" }, `Bounded answer: more ${cut.join(", ")} exist than shown. Narrow the search.`) : null;
}

function summary(view) {
  const read = view.nodes.reduce((n, node) => n + node.documents.reduce((m, d) => m + d.entity_ids.length, 0), 0);
  const merged = read > view.nodes.length ? ` · merged from ${read} document nodes` : "";
  return `${view.nodes.length} entities · ${view.edges.length} relations${merged}`;
}

function sourceItem(src, node) {
  return h("li", { dataset: { chunkId: src.id } },
    h("button", { type: "button", class: "link open-source", onclick: () => openChunk(src.id, { entity: node.name }) }, `Open chunk${src.page ? ` (page ${src.page})` : ""}`),
    h("div", { class: "excerpt" }, src.excerpt));
}

function detailsOf(node, view, panel) {
  const byId = new Map(view.sources.map((src) => [src.id, src]));
  const others = node.names.filter((n) => n !== node.name);
  fill(panel, h("h2", { id: "entity-title", tabindex: -1 }, node.name),
    others.length ? h("p", { class: "muted" }, `Also written: ${others.join(", ")}`) : null,
    node.attributes.length ? h("p", { class: "muted" }, node.attributes.join(" · ")) : null,
    h("h3", {}, `Named in ${node.documents.length} document(s)`),
    h("ul", { class: "documents", id: "entity-documents" }, node.documents.map((doc) => {
      const sources = doc.chunks.map((id) => byId.get(id)).filter(Boolean);
      return h("li", { dataset: { knowledgeId: doc.knowledge_id } },
        h("strong", { class: "doc-name" }, doc.file_name), h("span", { class: "muted" }, ` · ${sources.length} chunk(s)`),
        h("ul", { class: "sources" }, sources.map((src) => sourceItem(src, node))));
    })));
  panel.querySelector("h2").focus();
}

export function render(root) {
  const kbSelect = h("select", { name: "kb", id: "graph-kb", required: true });
  const docSelect = h("select", { name: "document", id: "graph-doc" }, h("option", { value: "" }, "the whole base"));
  const entity = h("input", { name: "entity", id: "graph-entity", required: true, placeholder: "part of a name (case-sensitive)" });
  const relations = h("input", { name: "relation_types", placeholder: "all types" });
  const limit = h("input", { name: "limit", type: "number", min: 1, placeholder: "default" });
  const area = h("div", { id: "graph-view" });
  const panel = h("aside", { class: "card", id: "entity-panel", "aria-live": "polite" }, h("p", { class: "muted" }, "Click an entity to see the documents naming it and the chunks it was read from."));
  const form = h("form", { class: "card", id: "graph-search" },
    h("div", { class: "row" }, field("Knowledge base", kbSelect), field("Document", docSelect), field("Entity name contains", entity),
      field("Relation types (comma separated)", relations), field("Limit", limit)),
    h("button", { type: "submit", class: "primary" }, "Search"));
  kbSelect.addEventListener("change", () => loadDocs());
  async function loadDocs() {
    if (!kbSelect.value) return;
    const docs = await attempt(() => call(`/knowledge-bases/${kbSelect.value}/knowledge?page_size=100`));
    if (docs) fill(docSelect, h("option", { value: "" }, "the whole base"), docs.items.map((d) => h("option", { value: d.id }, d.file_name)));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const body = { entity: entity.value };
      const types = relations.value.split(",").map((t) => t.trim()).filter(Boolean);
      if (types.length) body.relation_types = types;
      if (docSelect.value) body.knowledge_ids = [docSelect.value];
      if (limit.value) body.limit = Number(limit.value);
      const view = await call(`/knowledge-bases/${kbSelect.value}/graph-view`, { method: "POST", body });
      const pick = (node) => detailsOf(node, view, panel);
      fill(area, truncation(view.truncated),
        h("p", { id: "graph-summary" }, summary(view)),
        view.nodes.length ? drawing(view, pick) : h("p", { class: "muted" }, "No entity matches."),
        h("ul", { class: "entity-list", "aria-label": "Entities" }, view.nodes.map((node) => h("li", {},
          h("button", { type: "button", class: "link", dataset: { entityId: node.id }, onclick: () => pick(node) }, node.name),
          ` ${node.documents.length} document(s)`))));
    });
  });
  fill(root, h("h1", {}, "Graph"), form, h("div", { class: "graph-layout" }, h("section", { class: "card" }, area), panel));
  attempt(async () => {
    const kbs = await call("/knowledge-bases");
    const graphKbs = kbs.filter((kb) => kb.graph_on);
    if (!graphKbs.length) toast("No knowledge base builds a graph yet.");
    fill(kbSelect, graphKbs.map((kb) => h("option", { value: kb.id }, kb.name)));
    await loadDocs();
  });
  return null;
}
