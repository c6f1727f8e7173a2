// Open one chunk (a citation, a graph source, a row of a document) in the chunk dialog.

import { call } from "./api.js";
import { fill, h, toast } from "./dom.js";

/** Fetch the chunk by id and show it; `extra` adds lines (e.g. the citation's match type). */
export async function openChunk(chunkId, extra = {}) {
  const dialog = document.getElementById("chunk-dialog");
  let chunk;
  try {
    chunk = await call(`/chunks/${chunkId}`);
  } catch (error) {
    toast(error.message, "error");
    return;
  }
  const meta = {
    chunk: chunk.id,
    document: chunk.knowledge_id,
    type: chunk.chunk_type,
    page: chunk.page ?? "–",
    "graph status": chunk.graph_status + (chunk.graph_error ? ` (${chunk.graph_error})` : ""),
    enabled: chunk.enabled ? "yes" : "no",
    ...extra,
  };
  fill(document.getElementById("chunk-meta"), Object.entries(meta).map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
  document.getElementById("chunk-content").textContent = chunk.content;
  document.getElementById("chunk-dialog-title").textContent = `Chunk #${chunk.seq}`;
  if (!dialog.open) dialog.showModal();
}
