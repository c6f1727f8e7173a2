// Knowledge bases: list, create, edit (chunking, indexing, extraction config), delete.

import { call } from "../api.js";
import { attempt, field, fill, h, toast } from "../dom.js";

function tagsOf(text) {
  return text.split(",").map((t) => t.trim()).filter(Boolean);
}

// Separators are typed with visible escapes, one per line: "\n\n" means a blank line.
function separatorsToText(list) {
  return list.map((sep) => sep.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll("\t", "\\t")).join("\n");
}

function separatorsFromText(text) {
  return text.split("\n").filter((line) => line.length).map((line) =>
    line.replace(/\\(n|t|\\)/g, (_, c) => ({ n: "\n", t: "\t", "\\": "\\" }[c])));
}

function createForm(onCreated) {
  const name = h("input", { name: "name", required: true, maxlength: 200 });
  const description = h("input", { name: "description", maxlength: 2000 });
  const graph = h("input", { type: "checkbox", name: "graph" });
  const tags = h("input", { name: "tags", placeholder: "works_at, born_in" });
  const form = h("form", { class: "card", id: "create-kb", "aria-labelledby": "create-kb-title" },
    h("h2", { id: "create-kb-title" }, "New knowledge base"),
    h("div", { class: "row" },
      field("Name", name),
      field("Description", description),
      field("Relation labels (comma separated)", tags)),
    h("label", { class: "check" }, graph, " Build a knowledge graph (entities and relations)"),
    h("button", { type: "submit", class: "primary" }, "Create"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const on = graph.checked;
      const kb = await call("/knowledge-bases", {
        method: "POST",
        body: {
          name: name.value,
          description: description.value,
          indexing: { vector: true, keyword: true, graph_enabled: on },
          extract_config: { enabled: on, tags: tagsOf(tags.value) },
        },
      });
      toast(`Created ${kb.name}.`);
      form.reset();
      onCreated(kb);
    });
  });
  return form;
}

function editForm(kb, onSaved, onClose) {
  const c = kb.chunking;
  const x = kb.extract_config;
  const inputs = {
    name: h("input", { name: "name", value: kb.name, required: true }),
    description: h("input", { name: "description", value: kb.description }),
    size: h("input", { name: "chunk_size", type: "number", min: 1, value: c.chunk_size }),
    overlap: h("input", { name: "chunk_overlap", type: "number", min: 0, value: c.chunk_overlap }),
    separators: h("textarea", { name: "separators", rows: 3, value: separatorsToText(c.separators) }),
    vector: h("input", { type: "checkbox", name: "vector", checked: kb.indexing.vector }),
    keyword: h("input", { type: "checkbox", name: "keyword", checked: kb.indexing.keyword }),
    graph: h("input", { type: "checkbox", name: "graph_enabled", checked: kb.indexing.graph_enabled }),
    extract: h("input", { type: "checkbox", name: "extract_enabled", checked: x.enabled }),
    tags: h("input", { name: "tags", value: x.tags.join(", ") }),
    instructions: h("textarea", { name: "custom_instructions", rows: 2, value: x.custom_instructions }),
    example: h("textarea", { name: "example_text", rows: 2, value: x.text }),
    exampleGraph: h("textarea", { name: "example_graph", rows: 3, value: JSON.stringify({ nodes: x.nodes, relations: x.relations }) }),
  };
  const form = h("form", { class: "card", id: "edit-kb", "aria-labelledby": "edit-kb-title" },
    h("h2", { id: "edit-kb-title" }, `Edit ${kb.name}`),
    h("div", { class: "row" }, field("Name", inputs.name), field("Description", inputs.description)),
    h("fieldset", {}, h("legend", {}, "Chunking (applies to documents parsed afterwards)"),
      h("div", { class: "row" }, field("Chunk size (characters)", inputs.size), field("Overlap", inputs.overlap),
        field("Separators, one per line (\\n for a line break)", inputs.separators))),
    h("fieldset", {}, h("legend", {}, "Indexing"),
      h("label", { class: "check" }, inputs.vector, " Vector"),
      h("label", { class: "check" }, inputs.keyword, " Keyword"),
      h("label", { class: "check" }, inputs.graph, " Knowledge graph")),
    h("fieldset", {}, h("legend", {}, "Extraction"),
      h("label", { class: "check" }, inputs.extract, " Extraction enabled"),
      field("Relation labels (comma separated)", inputs.tags),
      field("Custom instructions", inputs.instructions),
      field("Example text", inputs.example),
      field("Example graph (JSON: nodes, relations)", inputs.exampleGraph)),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", onclick: onClose }, "Cancel")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const example = JSON.parse(inputs.exampleGraph.value || "{}");
      const saved = await call(`/knowledge-bases/${kb.id}`, {
        method: "PATCH",
        body: {
          name: inputs.name.value,
          description: inputs.description.value,
          chunking: {
            chunk_size: Number(inputs.size.value),
            chunk_overlap: Number(inputs.overlap.value),
            separators: separatorsFromText(inputs.separators.value),
          },
          indexing: { vector: inputs.vector.checked, keyword: inputs.keyword.checked, graph_enabled: inputs.graph.checked },
          extract_config: {
            enabled: inputs.extract.checked,
            tags: tagsOf(inputs.tags.value),
            custom_instructions: inputs.instructions.value,
            text: inputs.example.value,
            nodes: example.nodes || [],
            relations: example.relations || [],
          },
        },
      });
      toast(`Saved ${saved.name}.`);
      onSaved();
    });
  });
  return form;
}

export function render(root) {
  const table = h("tbody", { id: "kb-rows" });
  const editor = h("div", { id: "kb-editor" });
  async function load() {
    const kbs = await attempt(() => call("/knowledge-bases"));
    if (!kbs) return;
    fill(table, kbs.length ? kbs.map((kb) => h("tr", { dataset: { kbId: kb.id, kbName: kb.name } },
      h("td", {}, h("a", { href: `#/bases/${kb.id}` }, kb.name), h("div", { class: "muted" }, kb.description)),
      h("td", {}, kb.graph_on ? h("span", { class: "badge ok" }, "graph on") : h("span", { class: "badge" }, "graph off")),
      h("td", {}, `${kb.chunking.chunk_size} / ${kb.chunking.chunk_overlap}`),
      h("td", {}, kb.extract_config.tags.join(", ") || "–"),
      h("td", { class: "actions" },
        h("a", { class: "button", href: `#/bases/${kb.id}` }, "Documents"),
        h("button", { type: "button", class: "edit", onclick: () => { fill(editor, editForm(kb, () => { editor.replaceChildren(); load(); }, () => editor.replaceChildren())); editor.querySelector("input").focus(); } }, "Edit"),
        h("button", { type: "button", class: "danger", onclick: () => remove(kb) }, "Delete"))))
      : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No knowledge base yet.")));
  }
  async function remove(kb) {
    if (!window.confirm(`Delete ${kb.name} with its documents and graph?`)) return;
    await attempt(async () => {
      await call(`/knowledge-bases/${kb.id}`, { method: "DELETE" });
      toast(`${kb.name} is being deleted.`);
      await load();
    });
  }
  fill(root,
    h("h1", {}, "Knowledge bases"),
    createForm(() => load()),
    editor,
    h("div", { class: "card scroll" }, h("table", { id: "kb-table", class: "stack" },
      h("caption", { class: "sr-only" }, "Knowledge bases of this tenant"),
      h("thead", {}, h("tr", {}, ["Name", "Graph", "Chunk size / overlap", "Relation labels", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      table)));
  load();
  return null;
}
