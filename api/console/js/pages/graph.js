// Graph view: entities and relations of a base (or of one document) from graph-search, drawn
// with a force layout and listed; a click on an entity shows its source chunks.

import { call } from "../api.js";
import { openChunk } from "../chunk_dialog.js";
import { attempt, field, fill, h, toast } from "../dom.js";
import { drawing } from "../graph_drawing.js";

function truncation(t) {
  const cut = Object.entries(t).filter(([, v]) => v).map(([k]) => k);
  return cut.length ? h("p", { class: "warn", id: "graph-truncated" }, `Bounded answer: more ${cut.join(", ")} exist than shown. Narrow the search.`) : null;
}

function sourcesOf(entity, result, panel) {
  const byId = new Map(result.sources.map((src) => [src.id, src]));
  const sources = entity.chunks.map((id) => byId.get(id)).filter(Boolean);
  fill(panel, h("h2", { id: "entity-title", tabindex: -1 }, entity.name),
    entity.attributes.length ? h("p", { class: "muted" }, entity.attributes.join(" · ")) : null,
    h("h3", {}, `Source chunks (${sources.length})`),
    h("ul", { class: "sources", id: "entity-sources" }, sources.map((src) => h("li", { dataset: { chunkId: src.id } },
      h("button", { type: "button", class: "link open-source", onclick: () => openChunk(src.id, { entity: entity.name }) }, `Open chunk${src.page ? ` (page ${src.page})` : ""}`),
      h("div", { class: "excerpt" }, src.excerpt)))));
  panel.querySelector("h2").focus();
}

export function render(root) {
  const kbSelect = h("select", { name: "kb", id: "graph-kb", required: true });
  const docSelect = h("select", { name: "document", id: "graph-doc" }, h("option", { value: "" }, "the whole base"));
  const entity = h("input", { name: "entity", id: "graph-entity", required: true, placeholder: "part of a name (case-sensitive)" });
  const relations = h("input", { name: "relation_types", placeholder: "all types" });
  const limit = h("input", { name: "limit", type: "number", min: 1, placeholder: "default" });
  const view = h("div", { id: "graph-view" });
  const panel = h("aside", { class: "card", id: "entity-panel", "aria-live": "polite" }, h("p", { class: "muted" }, "Click an entity to see the chunks it was read from."));
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
      const result = await call(`/knowledge-bases/${kbSelect.value}/graph-search`, { method: "POST", body });
      const pick = (e) => sourcesOf(e, result, panel);
      fill(view, truncation(result.truncated),
        h("p", { id: "graph-summary" }, `${result.entities.length} entities · ${result.relations.length} relations`),
        result.entities.length ? drawing(result, pick) : h("p", { class: "muted" }, "No entity matches."),
        h("ul", { class: "entity-list", "aria-label": "Entities" }, result.entities.map((e) => h("li", {},
          h("button", { type: "button", class: "link", dataset: { entityId: e.id }, onclick: () => pick(e) }, e.name),
          ` ${e.chunks.length} chunk(s)`))));
    });
  });
  fill(root, h("h1", {}, "Graph"), form, h("div", { class: "graph-layout" }, h("section", { class: "card" }, view), panel));
  attempt(async () => {
    const kbs = await call("/knowledge-bases");
    const graphKbs = kbs.filter((kb) => kb.graph_on);
    if (!graphKbs.length) toast("No knowledge base builds a graph yet.");
    fill(kbSelect, graphKbs.map((kb) => h("option", { value: kb.id }, kb.name)));
    await loadDocs();
  });
  return null;
}
