// Extraction previews (manage_models): paste a text, pick relation labels, see the graph the
// model reads, then apply the labels and the example to a base's extraction config.

import { call } from "../api.js";
import { attempt, field, fill, h, toast } from "../dom.js";
import { drawing } from "../graph_drawing.js";

const MAX_TEXT_CHARS = 5000;

function tagsOf(text) {
  return [...new Set(text.split(",").map((t) => t.trim()).filter(Boolean))];
}

function previewView(preview) {
  const graph = {
    nodes: preview.nodes.map((n) => ({ id: n.name, name: n.name, matched: true, documents: [] })),
    edges: preview.relations.map((r) => ({ source: r.node1, target: r.node2, type: r.type, count: 1 })),
  };
  return [
    h("p", { id: "preview-summary" }, `${preview.nodes.length} entities · ${preview.relations.length} relations · model output ${preview.output_kind}` +
      (preview.dropped_relations ? ` · ${preview.dropped_relations} relation(s) dropped` : "")),
    preview.nodes.length ? drawing(graph, () => {}) : null,
    h("div", { class: "scroll" }, h("table", { id: "preview-relations" },
      h("thead", {}, h("tr", {}, ["From", "Relation", "To"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, preview.relations.map((r) => h("tr", {}, h("td", {}, r.node1), h("td", {}, r.type), h("td", {}, r.node2)))))),
    h("ul", { id: "preview-nodes" }, preview.nodes.map((n) => h("li", {}, h("strong", {}, n.name), n.attributes.length ? ` — ${n.attributes.join(", ")}` : ""))),
  ];
}

export function render(root) {
  const text = h("textarea", { id: "preview-text", name: "text", rows: 8, maxlength: MAX_TEXT_CHARS, required: true });
  const count = h("small", { "aria-live": "polite" }, `0 / ${MAX_TEXT_CHARS}`);
  const tags = h("input", { id: "preview-tags", name: "tags", placeholder: "works_at, born_in" });
  const result = h("div", { id: "preview-result", "aria-live": "polite" });
  const kbSelect = h("select", { id: "apply-kb", name: "kb" });
  const turnOn = h("input", { type: "checkbox", name: "graph_on", checked: true });
  let last = null;
  text.addEventListener("input", () => { count.textContent = `${text.value.length} / ${MAX_TEXT_CHARS}`; });
  const busy = async (button, action) => {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    try { await attempt(action); } finally { button.disabled = false; button.removeAttribute("aria-busy"); }
  };
  const extract = h("button", { type: "submit", class: "primary", id: "run-preview" }, "Extract");
  const suggest = h("button", { type: "button", id: "suggest-tags" }, "Suggest labels for this text");
  const sample = h("button", { type: "button", id: "sample-text" }, "Write a sample text for these labels");
  suggest.addEventListener("click", () => busy(suggest, async () => {
    const answer = await call("/initialization/extract/fabri-tag", { method: "POST", body: { text: text.value } });
    tags.value = answer.tags.join(", ");
  }));
  sample.addEventListener("click", () => busy(sample, async () => {
    const answer = await call("/initialization/extract/fabri-text", { method: "POST", body: { tags: tagsOf(tags.value) } });
    text.value = answer.text;
    text.dispatchEvent(new Event("input"));
  }));
  const form = h("form", { class: "card", id: "preview-form" },
    field("Text", text, null), count,
    field("Relation labels (comma separated)", tags),
    h("div", { class: "actions" }, extract, suggest, sample));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(extract, async () => {
      last = { text: text.value, tags: tagsOf(tags.value) };
      const preview = await call("/initialization/extract/text-relation", { method: "POST", body: last });
      last.preview = preview;
      fill(result, previewView(preview));
    });
  });
  const apply = h("form", { class: "card", id: "apply-config" },
    h("h2", {}, "Apply to a knowledge base"),
    h("p", { class: "muted" }, "Sets the base's relation labels and uses this text and its extracted graph as the example."),
    field("Knowledge base", kbSelect),
    h("label", { class: "check" }, turnOn, " Turn the graph on"),
    h("button", { type: "submit" }, "Apply"));
  apply.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!last || !last.preview) { toast("Run a preview first.", "error"); return; }
    attempt(async () => {
      const kb = await call(`/knowledge-bases/${kbSelect.value}`);
      const on = turnOn.checked;
      const saved = await call(`/knowledge-bases/${kb.id}`, {
        method: "PATCH",
        body: {
          indexing: { ...kb.indexing, graph_enabled: on || kb.indexing.graph_enabled },
          extract_config: {
            ...kb.extract_config,
            enabled: on || kb.extract_config.enabled,
            tags: last.tags,
            text: last.text,
            nodes: last.preview.nodes.map((n) => ({ name: n.name, attributes: n.attributes })),
            relations: last.preview.relations,
          },
        },
      });
      toast(`Extraction config applied to ${saved.name}.`);
    });
  });
  fill(root, h("h1", {}, "Extraction previews"),
    h("div", { class: "grid2" }, form, h("section", { class: "card", "aria-label": "Preview" }, h("h2", {}, "Extracted graph"), result)), apply);
  attempt(async () => {
    const kbs = await call("/knowledge-bases");
    fill(kbSelect, kbs.map((kb) => h("option", { value: kb.id }, kb.name)));
  });
  return null;
}
