// Chat: sessions, a streamed answer (fetch + ReadableStream), numbered citations that open their
// chunk, the graph's part in each reference, and a stop button (AbortController). In agent mode
// the answer comes after the agent's steps (thoughts, tool calls, observations), listed as they
// stream.

import { call, streamEvents } from "../api.js";
import { openChunk } from "../chunk_dialog.js";
import { attempt, field, fill, h, shortId, toast } from "../dom.js";

const CITATION = /\[(\d+)\]/g;

/** The answer text with each [n] made a button opening the cited chunk. */
function answerWithCitations(text, references) {
  const byNumber = new Map(references.map((r) => [r.n, r]));
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    const ref = byNumber.get(Number(match[1]));
    if (!ref) continue;
    parts.push(text.slice(last, match.index));
    parts.push(h("button", {
      type: "button", class: "citation", dataset: { n: ref.n, chunkId: ref.chunk_id },
      "aria-label": `Open citation ${ref.n}: ${ref.file_name}`,
      onclick: () => openChunk(ref.chunk_id, { citation: `[${ref.n}]`, file: ref.file_name, match: ref.match_type }),
    }, `[${ref.n}]`));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

/** How the graph led to a passage: the question's entities it started from and the path. */
function graphLine(graph) {
  const from = graph.seeds.length ? `from ${graph.seeds.join(", ")}` : "";
  // A one-entity path that is itself a seed says nothing more.
  const walked = graph.path.length > 1 || (graph.path.length === 1 && !graph.seeds.includes(graph.path[0]));
  return h("div", { class: "graph-led" },
    h("span", { class: "badge graph" }, `graph #${graph.rank}`), " ",
    from, walked ? ` via ${graph.path.join(" → ")}` : "");
}

function referenceList(references, entities) {
  if (!references.length) return null;
  return h("details", { class: "refs", open: true },
    h("summary", {}, `${references.length} references` + (entities && entities.length ? ` · question entities: ${entities.join(", ")}` : "")),
    h("ol", {}, references.map((ref) => {
      const viaGraph = Boolean(ref.graph);
      return h("li", { value: ref.n, dataset: { n: ref.n, match: ref.match_type, graph: viaGraph ? "yes" : "no" } },
        h("button", { type: "button", class: "link", onclick: () => openChunk(ref.chunk_id, { citation: `[${ref.n}]`, file: ref.file_name, match: ref.match_type }) },
          `${ref.file_name}${ref.page ? ` p.${ref.page}` : ""}`),
        " ", h("span", { class: `badge ${ref.match_type === "graph" ? "graph" : ""}` }, ref.match_type),
        viaGraph ? graphLine(ref.graph) : null,
        h("div", { class: "excerpt muted" }, ref.excerpt));
    })));
}

const STEP_LABELS = {
  think: "Thought", act: "Tool call", observe: "Observation", check: "Check",
  reflect: "Reflection", force_respond: "Out of steps", respond: "Answer accepted",
};

/** One agent step as a list item: what kind it is, then its tool call or its summary. */
function stepItem(step) {
  const what = step.kind === "act"
    ? `${step.tool}(${JSON.stringify(step.arguments || {})})`
    : step.summary;
  return h("li", { class: `step ${step.kind}`, dataset: { kind: step.kind, step: step.step } },
    h("span", { class: "badge" }, STEP_LABELS[step.kind] || step.kind), " ", what);
}

function stepList(steps) {
  return h("ol", { class: "steps", "aria-label": "Agent steps" }, steps.map(stepItem));
}

function messageView(role, content, references = [], entities = null, steps = []) {
  const body = h("div", { class: "text" }, role === "assistant" ? answerWithCitations(content, references) : content);
  return h("article", { class: `msg ${role}`, "aria-label": role === "user" ? "Question" : "Answer" },
    steps && steps.length ? stepList(steps) : null, body, referenceList(references, entities));
}

function newSessionForm(kbs, onCreated) {
  const title = h("input", { name: "title", maxlength: 300, placeholder: "optional" });
  const boxes = kbs.map((kb) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "kb", value: kb.id }), ` ${kb.name}`));
  const form = h("form", { id: "new-session", class: "card" },
    h("h2", {}, "New session"), field("Title", title),
    h("fieldset", {}, h("legend", {}, "Knowledge bases"), boxes.length ? boxes : h("p", { class: "muted" }, "Create a knowledge base first.")),
    h("button", { type: "submit", class: "primary" }, "Start"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const kbIds = [...form.querySelectorAll("input[name=kb]:checked")].map((b) => b.value);
    if (!kbIds.length) { toast("Pick at least one knowledge base.", "error"); return; }
    attempt(async () => {
      const created = await call("/sessions", { method: "POST", body: { title: title.value, kb_ids: kbIds } });
      onCreated(created);
    });
  });
  return form;
}

function conversation(pane, sessionId, onStreaming) {
  const log = h("div", { class: "log", id: "chat-log", "aria-live": "polite" });
  const question = h("textarea", { id: "question", name: "question", rows: 2, required: true });
  const useGraph = h("input", { type: "checkbox", name: "use_graph", checked: true });
  const agentMode = h("input", { type: "checkbox", name: "agent", id: "agent-mode" });
  const send = h("button", { type: "submit", class: "primary", id: "send" }, "Ask");
  const stop = h("button", { type: "button", id: "stop", disabled: true }, "Stop");
  const status = h("span", { class: "muted", id: "chat-status" });
  const form = h("form", { id: "ask", class: "ask" }, field("Question", question),
    h("div", { class: "actions" }, h("label", { class: "check" }, useGraph, " Use the graph"),
      h("label", { class: "check" }, agentMode, " Agent mode"), send, stop, status));
  let controller = null;
  stop.addEventListener("click", () => controller && controller.abort());
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = question.value.trim();
    if (!query || controller) return;
    question.value = "";
    log.append(messageView("user", query));
    const answer = h("article", { class: "msg assistant streaming", "aria-label": "Answer", "aria-busy": "true" }, h("div", { class: "text" }));
    log.append(answer);
    controller = new AbortController();
    onStreaming(controller);
    send.disabled = true; stop.disabled = false; status.textContent = "answering…";
    let text = "";
    let references = [];
    let entities = [];
    const steps = [];
    const route = agentMode.checked ? "agent-chat" : "knowledge-chat";
    try {
      for await (const { name, data } of streamEvents(`/${route}/${sessionId}`, { query, use_graph: useGraph.checked }, controller.signal)) {
        if (name === "references") { references = data.references; entities = data.entities; }
        else if (name === "step") steps.push(data);
        else if (name === "delta") text += data.content;
        else if (name === "error") throw new Error(data.message);
        else if (name === "done") status.textContent = `done in ${Math.round(data.timings_ms.total)} ms` + (data.usage ? ` · ${data.usage.total_tokens} tokens` : "");
        fill(answer, steps.length ? stepList(steps) : null,
          h("div", { class: "text" }, answerWithCitations(text, references)), referenceList(references, entities));
        log.scrollTop = log.scrollHeight;
      }
    } catch (error) {
      const stopped = error.name === "AbortError";
      status.textContent = stopped ? "stopped" : "";
      answer.append(h("p", { class: stopped ? "muted" : "error" }, stopped ? "Stopped." : error.message));
    } finally {
      answer.classList.remove("streaming");
      answer.setAttribute("aria-busy", "false");
      controller = null;
      onStreaming(null);
      send.disabled = false; stop.disabled = true;
      question.focus();
    }
  });
  attempt(async () => {
    let data = await call(`/sessions/${sessionId}`);
    // Messages come a page at a time, oldest first: a long session opens on its latest page.
    const last = Math.ceil(data.messages_total / data.page_size);
    if (last > 1) data = await call(`/sessions/${sessionId}?page=${last}`);
    fill(pane, h("h2", { id: "session-title" }, data.title || `Session ${shortId(data.id)}`), log, form);
    log.append(...data.messages.map((m) => messageView(m.role, m.content, m.references, null, m.steps)));
    log.scrollTop = log.scrollHeight;
    question.focus();
  });
}

export function render(root, { params }) {
  const list = h("ul", { class: "sessions", id: "session-list" });
  const pane = h("section", { class: "card chat-pane", id: "chat-pane", "aria-label": "Conversation" });
  let active = null;
  async function loadSessions() {
    const [page, kbs] = await Promise.all([call("/sessions?page_size=100"), call("/knowledge-bases")]);
    const sessions = page.items;
    fill(list, sessions.map((s) => h("li", {},
      h("a", { href: `#/chat/${s.id}`, "aria-current": s.id === params[0] ? "page" : null }, s.title || `Session ${shortId(s.id)}`),
      h("button", { type: "button", class: "danger small", "aria-label": `Delete session ${s.title || shortId(s.id)}`, onclick: () => remove(s) }, "×"))));
    if (!params[0]) fill(pane, newSessionForm(kbs, (created) => { location.hash = `#/chat/${created.id}`; }));
  }
  async function remove(s) {
    if (!window.confirm("Delete this session?")) return;
    await attempt(async () => { await call(`/sessions/${s.id}`, { method: "DELETE" }); location.hash = "#/chat"; await loadSessions(); });
  }
  fill(root, h("h1", {}, "Chat"), h("div", { class: "chat" },
    h("aside", { class: "card", "aria-label": "Sessions" }, h("a", { class: "button", href: "#/chat" }, "New session"), list), pane));
  attempt(loadSessions);
  if (params[0]) conversation(pane, params[0], (c) => { active = c; });
  return () => active && active.abort();
}
