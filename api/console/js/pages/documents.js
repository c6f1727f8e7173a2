// Documents of one base: upload (drag and drop, per-file progress), URL and text import, a live
// status table with per-stage progress, re-parse, cancel, delete, and a document's chunks.

import { call, uploadFile } from "../api.js";
import { openChunk } from "../chunk_dialog.js";
import { attempt, field, fill, formatBytes, h, toast } from "../dom.js";

const POLL_MS = 1000;
const PAGE_SIZE = 100;
const CHUNK_PAGE_SIZE = 50;
const EXCERPT_CHARS = 160;
const WORKING = new Set(["pending", "processing", "finalizing"]);
const STAGES = ["parse", "embed", "index", "graph"];

function stageCell(stages) {
  if (!stages) return h("span", { class: "muted" }, "–");
  return h("ul", { class: "stages" }, STAGES.filter((name) => stages[name]).map((name) => {
    const stage = stages[name];
    const max = Math.max(stage.total, 1);
    return h("li", { dataset: { stage: name, status: stage.status } },
      h("span", {}, name),
      h("progress", { max, value: stage.status === "done" ? max : stage.done, "aria-label": `${name} ${stage.done} of ${stage.total}` }),
      h("small", {}, `${stage.done}/${stage.total} ${stage.status}`));
  }));
}

function uploader(kbId, onUploaded) {
  const list = h("ul", { class: "uploads", id: "upload-list", "aria-live": "polite" });
  const input = h("input", { type: "file", id: "file-input", multiple: true });
  function send(files) {
    for (const file of files) {
      const bar = h("progress", { max: 1, value: 0, "aria-label": `upload of ${file.name}` });
      const status = h("span", { class: "upload-status" }, "uploading");
      list.append(h("li", { dataset: { fileName: file.name } }, h("span", {}, `${file.name} (${formatBytes(file.size)})`), bar, status));
      uploadFile(kbId, file, (fraction) => { bar.value = fraction; })
        .then(() => { bar.value = 1; status.textContent = "queued"; onUploaded(); })
        .catch((error) => { status.textContent = error.message; status.classList.add("error"); });
    }
  }
  input.addEventListener("change", () => { send([...input.files]); input.value = ""; });
  const zone = h("div", { class: "dropzone", id: "dropzone", tabindex: 0, role: "button", "aria-label": "Drop files here, or press Enter to choose files" },
    "Drop files here (PDF, images, text, Markdown, HTML, DOCX), or press Enter to choose them.");
  zone.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); input.click(); } });
  zone.addEventListener("click", () => input.click());
  zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    send([...event.dataTransfer.files]);
  });
  return h("section", { class: "card", "aria-labelledby": "upload-title" },
    h("h2", { id: "upload-title" }, "Upload"), zone, field("Or choose files", input), list);
}

function importForms(kbId, onAdded) {
  const url = h("input", { type: "url", name: "url", required: true, placeholder: "https://" });
  const title = h("input", { name: "title", required: true, maxlength: 500 });
  const content = h("textarea", { name: "content", rows: 4, required: true });
  const urlForm = h("form", { id: "import-url" }, field("Import a URL", url), h("button", { type: "submit" }, "Import URL"));
  const textForm = h("form", { id: "import-text" }, field("Title", title), field("Text (Markdown)", content), h("button", { type: "submit" }, "Add text"));
  urlForm.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      await call(`/knowledge-bases/${kbId}/knowledge/url`, { method: "POST", body: { url: url.value } });
      urlForm.reset();
      toast("URL queued.");
      onAdded();
    });
  });
  textForm.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      await call(`/knowledge-bases/${kbId}/knowledge/text`, { method: "POST", body: { title: title.value, content: content.value } });
      textForm.reset();
      toast("Text queued.");
      onAdded();
    });
  });
  return h("section", { class: "card", "aria-labelledby": "import-title" }, h("h2", { id: "import-title" }, "Import"), h("div", { class: "row" }, urlForm, textForm));
}

function chunksPanel(panel, doc, page = 1) {
  attempt(async () => {
    const data = await call(`/knowledge/${doc.id}/chunks?page=${page}&page_size=${CHUNK_PAGE_SIZE}`);
    const pages = Math.max(1, Math.ceil(data.total / CHUNK_PAGE_SIZE));
    fill(panel, h("section", { class: "card", id: "chunks", "aria-labelledby": "chunks-title" },
      h("h2", { id: "chunks-title", tabindex: -1 }, `Chunks of ${doc.file_name} (${data.total})`),
      h("div", { class: "scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, ["#", "Type", "Page", "Graph", "Text", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, data.items.map((chunk) => h("tr", { dataset: { chunkId: chunk.id } },
          h("td", {}, chunk.seq),
          h("td", {}, chunk.chunk_type),
          h("td", {}, chunk.page ?? "–"),
          h("td", {}, h("span", { class: `badge ${chunk.graph_status}` }, chunk.graph_status)),
          h("td", { class: "excerpt" }, chunk.content.slice(0, EXCERPT_CHARS)),
          h("td", {}, h("button", { type: "button", class: "open-chunk", onclick: () => openChunk(chunk.id) }, "Open"))))))),
      pages > 1 ? h("nav", { class: "pager", "aria-label": "Chunk pages" },
        h("button", { type: "button", disabled: page <= 1, onclick: () => chunksPanel(panel, doc, page - 1) }, "Previous"),
        h("span", {}, `page ${page} of ${pages}`),
        h("button", { type: "button", disabled: page >= pages, onclick: () => chunksPanel(panel, doc, page + 1) }, "Next")) : null));
    panel.querySelector("h2").focus();
  });
}

function docRow(doc, stages, actions) {
  const counts = `${doc.page_count} p · ${doc.chunk_count} chunks · ${doc.entity_count} entities · ${doc.relation_count} relations` +
    (doc.failed_chunk_count ? ` · ${doc.failed_chunk_count} failed` : "");
  return h("tr", { dataset: { docId: doc.id, docName: doc.file_name, status: doc.parse_status, attempt: doc.attempt } },
    h("td", {}, doc.file_name, h("div", { class: "muted" }, `${doc.source} · ${doc.file_type} · ${formatBytes(doc.file_size)}`)),
    h("td", { class: "status" }, h("span", { class: `badge ${doc.parse_status}` }, doc.parse_status)),
    h("td", {}, stageCell(stages)),
    h("td", { class: "counts" }, counts),
    h("td", { class: "error" }, doc.error || ""),
    h("td", { class: "actions" },
      h("button", { type: "button", class: "show-chunks", onclick: () => actions.chunks(doc) }, "Chunks"),
      h("button", { type: "button", class: "reparse", onclick: () => actions.reparse(doc) }, "Re-parse"),
      WORKING.has(doc.parse_status) ? h("button", { type: "button", onclick: () => actions.cancel(doc) }, "Cancel") : null,
      h("button", { type: "button", class: "danger delete", onclick: () => actions.remove(doc) }, "Delete")));
}

export function render(root, { kbId }) {
  const rows = h("tbody", { id: "doc-rows" });
  const chunkPanel = h("div", { id: "chunk-panel" });
  const heading = h("h1", {}, "Documents");
  const countNote = h("p", { class: "muted" });
  const stagesById = new Map();
  const statusById = new Map();
  let timer = null;
  let stopped = false;
  const act = (path, method, message) => attempt(async () => { await call(path, { method }); toast(message); await refresh(); });
  const actions = {
    chunks: (doc) => chunksPanel(chunkPanel, doc),
    reparse: (doc) => act(`/knowledge/${doc.id}/reparse`, "POST", `${doc.file_name} queued again.`),
    cancel: (doc) => act(`/knowledge/${doc.id}/cancel`, "POST", `${doc.file_name} cancelled.`),
    remove: (doc) => window.confirm(`Delete ${doc.file_name}?`) && act(`/knowledge/${doc.id}`, "DELETE", `${doc.file_name} is being deleted.`),
  };
  async function refresh() {
    clearTimeout(timer);
    try {
      const page = await call(`/knowledge-bases/${kbId}/knowledge?page_size=${PAGE_SIZE}`);
      // Stages are read again while a document works and once more when its status changes.
      const stale = page.items.filter((d) => WORKING.has(d.parse_status) || statusById.get(d.id) !== d.parse_status);
      await Promise.all(stale.map(async (d) => {
        stagesById.set(d.id, (await call(`/knowledge/${d.id}/stages`)).stages);
        statusById.set(d.id, d.parse_status);
      }));
      fill(rows, page.items.length ? page.items.map((d) => docRow(d, stagesById.get(d.id), actions))
        : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No document yet.")));
      countNote.textContent = page.total > page.items.length ? `The ${page.items.length} newest of ${page.total} documents.` : "";
      if (!stopped && page.items.some((d) => WORKING.has(d.parse_status))) timer = setTimeout(refresh, POLL_MS);
    } catch (error) {
      toast(error.message, "error");
    }
  }
  attempt(async () => {
    const kb = await call(`/knowledge-bases/${kbId}`);
    heading.textContent = `Documents of ${kb.name}`;
    document.title = `${kb.name} · graphrag`;
  });
  fill(root, h("p", {}, h("a", { href: "#/bases" }, "← Knowledge bases")), heading,
    h("div", { class: "grid2" }, uploader(kbId, refresh), importForms(kbId, refresh)),
    h("section", { class: "card", "aria-labelledby": "docs-title" },
      h("h2", { id: "docs-title" }, "Status"), countNote,
      h("div", { class: "scroll" }, h("table", { id: "doc-table", class: "stack" },
        h("thead", {}, h("tr", {}, ["Document", "Status", "Stages", "Counts", "Error", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
        rows))),
    chunkPanel);
  refresh();
  return () => { stopped = true; clearTimeout(timer); };
}
