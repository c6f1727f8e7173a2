// Evaluation of a base: upload question sets (JSONL), start runs with a configuration, follow
// their progress, plot the metrics of the chosen runs as bars and compare two runs question by
// question. The base is in the URL: #/evaluation/<kb id>.

import { call, postForm } from "../api.js";
import { attempt, field, fill, h, shortId, toast } from "../dom.js";
import { metricsChart } from "../eval_chart.js";
import { comparison, formatMetric } from "../eval_compare.js";

const POLL_MS = 1000;
const ACTIVE = new Set(["queued", "running"]);
// A tri-state choice: the base's own setting (null), or forced on or off.
const TRI = [["", "the base's own"], ["on", "on"], ["off", "off"]];

function triSelect(name) {
  return h("select", { name }, TRI.map(([value, label]) => h("option", { value }, label)));
}

function triValue(select) {
  return select.value === "" ? null : select.value === "on";
}

function hopsText(hops) {
  const parts = Object.entries(hops || {}).map(([n, count]) => `${n} hops: ${count}`);
  return parts.length ? parts.join(", ") : "–";
}

function configText(config) {
  const onOff = (v) => (v ? "on" : "off");
  return `graph ${onOff(config.graph)} · keyword ${onOff(config.keyword)} · top_k ${config.top_k}` +
    (config.answer ? " · answers" : "");
}

function uploadForm(kbId, onUploaded) {
  const file = h("input", { type: "file", name: "file", id: "eval-file", accept: ".jsonl,.json,.txt", required: true });
  const name = h("input", { name: "name", maxlength: 200, placeholder: "the file's name" });
  const form = h("form", { class: "card", id: "eval-upload", "aria-labelledby": "eval-upload-title" },
    h("h2", { id: "eval-upload-title" }, "Upload a question set"),
    h("p", { class: "muted" }, "JSONL, one question a line: question, and optionally answer, answer_aliases, gold (document ids, file names or titles), hops, tags."),
    h("div", { class: "row" }, field("File", file), field("Name", name)),
    h("button", { type: "submit", class: "primary" }, "Upload"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const body = new FormData();
      body.append("file", file.files[0], file.files[0].name);
      if (name.value.trim()) body.append("name", name.value.trim());
      const set = await postForm(`/knowledge-bases/${kbId}/eval-sets`, body);
      toast(`Uploaded ${set.name}: ${set.question_count} questions.`);
      form.reset();
      onUploaded();
    });
  });
  return form;
}

function runForm(kbId, onStarted) {
  const set = h("select", { name: "eval_set_id", id: "run-set", required: true });
  const name = h("input", { name: "name", maxlength: 200, placeholder: "e.g. graph on, top 10" });
  const graph = triSelect("graph");
  const keyword = triSelect("keyword");
  const topK = h("input", { name: "top_k", type: "number", min: 1, placeholder: "the base's own" });
  const answer = h("input", { type: "checkbox", name: "answer" });
  const form = h("form", { class: "card", id: "eval-run-form", "aria-labelledby": "eval-run-title" },
    h("h2", { id: "eval-run-title" }, "Start a run"),
    h("div", { class: "row" }, field("Question set", set), field("Name", name)),
    h("div", { class: "row" }, field("Graph", graph), field("Keyword search", keyword), field("Top k", topK)),
    h("label", { class: "check" }, answer, " Ask for answers too (slower: one model call per question)"),
    h("button", { type: "submit", class: "primary" }, "Start"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const config = { graph: triValue(graph), keyword: triValue(keyword), top_k: topK.value ? Number(topK.value) : null, answer: answer.checked };
      const body = { eval_set_id: set.value, config };
      if (name.value.trim()) body.name = name.value.trim();
      const run = await call(`/knowledge-bases/${kbId}/eval-runs`, { method: "POST", body });
      toast(`Run ${run.name} queued.`);
      name.value = "";
      onStarted();
    });
  });
  return { form, setSelect: set };
}

function setRow(set, canWrite, onDelete) {
  return h("tr", { dataset: { setId: set.id, setName: set.name } },
    h("td", {}, set.name), h("td", {}, set.question_count), h("td", {}, hopsText(set.hops)),
    h("td", {}, set.tags.join(", ") || "–"), h("td", { class: "muted" }, new Date(set.created_at).toLocaleString()),
    h("td", { class: "actions" }, canWrite ? h("button", { type: "button", class: "danger delete-set", onclick: () => onDelete(set) }, "Delete") : null));
}

function runRow(run, picked, actions) {
  const overall = run.metrics ? run.metrics.overall : {};
  const pick = h("input", { type: "checkbox", class: "pick-run", checked: picked, disabled: !run.metrics, "aria-label": `plot ${run.name}` });
  pick.addEventListener("change", () => actions.pick(run, pick.checked));
  const total = Math.max(run.progress.total, 1);
  return h("tr", { dataset: { runId: run.id, runName: run.name, status: run.status } },
    h("td", {}, pick),
    h("td", {}, run.name, h("div", { class: "muted" }, configText(run.config))),
    h("td", { class: "status" }, h("span", { class: `badge ${run.status}` }, run.status), run.error ? h("div", { class: "error" }, run.error) : null),
    h("td", {}, h("progress", { max: total, value: run.progress.done, "aria-label": `${run.name}: ${run.progress.done} of ${run.progress.total}` }),
      h("small", { class: "progress-text" }, `${run.progress.done}/${run.progress.total}`)),
    h("td", {}, formatMetric(overall.r_at_5)), h("td", {}, formatMetric(overall.mrr)),
    h("td", { class: "actions" }, ACTIVE.has(run.status) && actions.canWrite
      ? h("button", { type: "button", class: "cancel-run", onclick: () => actions.cancel(run) }, "Cancel") : null));
}

// A choice the user made stays; until then the default follows the runs as they finish.
function runOptions(select, runs, preferred) {
  const done = runs.filter((r) => r.metrics);
  const keep = select.dataset.chosen ? select.value : preferred;
  fill(select, done.map((r) => h("option", { value: r.id }, `${r.name} (${shortId(r.id)})`)));
  if (done.some((r) => r.id === keep)) select.value = keep;
}

function comparePanel(kbId) {
  const a = h("select", { name: "a", id: "compare-a", required: true });
  const b = h("select", { name: "b", id: "compare-b", required: true });
  for (const select of [a, b]) select.addEventListener("change", () => { select.dataset.chosen = "yes"; });
  const out = h("div", { id: "compare-result", "aria-live": "polite" });
  const form = h("form", { class: "card", id: "eval-compare", "aria-labelledby": "compare-title" },
    h("h2", { id: "compare-title" }, "Compare two runs"),
    h("div", { class: "row" }, field("Run A", a), field("Run B", b)),
    h("button", { type: "submit" }, "Compare"), out);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => fill(out, await comparison(kbId, a.value, b.value)));
  });
  return {
    form,
    update(runs) {
      const done = runs.filter((r) => r.metrics);
      // Newest first: by default B is the newest run and A the one before it.
      runOptions(a, runs, done[1] ? done[1].id : "");
      runOptions(b, runs, done[0] ? done[0].id : "");
    },
  };
}

function kbPicker(kbId) {
  const select = h("select", { id: "eval-kb", name: "kb" }, h("option", { value: "" }, "choose a base"));
  select.addEventListener("change", () => { location.hash = select.value ? `#/evaluation/${select.value}` : "#/evaluation"; });
  attempt(async () => {
    const kbs = await call("/knowledge-bases");
    fill(select, h("option", { value: "" }, "choose a base"), kbs.map((kb) => h("option", { value: kb.id }, kb.name)));
    select.value = kbId || "";
    if (kbId && select.value !== kbId) toast("That knowledge base was not found.", "error");
  });
  return h("form", { class: "card", id: "eval-base" }, field("Knowledge base", select));
}

export function render(root, { caller, params }) {
  const kbId = params[0] || "";
  fill(root, h("h1", {}, "Evaluation"), kbPicker(kbId));
  if (!kbId) {
    root.append(h("p", { class: "muted" }, "Choose a base to see its question sets and runs."));
    return null;
  }
  const canWrite = caller.capabilities.includes("write");
  const picked = new Set();
  const setRows = h("tbody", { id: "eval-set-rows" });
  const runRows = h("tbody", { id: "eval-run-rows" });
  const chart = h("div", { id: "eval-chart-area" });
  const starter = runForm(kbId, () => loadRuns());
  const compare = comparePanel(kbId);
  let runs = [];
  let firstLoad = true;
  let timer = null;
  let stopped = false;
  const base = `/knowledge-bases/${kbId}`;

  function drawChart() {
    const shown = runs.filter((r) => r.metrics && picked.has(r.id)).reverse(); // oldest first
    fill(chart, shown.length ? metricsChart(shown) : h("p", { class: "muted" }, "Tick finished runs to plot their metrics."));
  }
  const actions = {
    canWrite,
    pick(run, on) { if (on) picked.add(run.id); else picked.delete(run.id); drawChart(); },
    cancel: (run) => attempt(async () => { await call(`${base}/eval-runs/${run.id}/cancel`, { method: "POST" }); toast(`${run.name} cancelled.`); await loadRuns(); }),
  };
  async function loadRuns() {
    clearTimeout(timer);
    try {
      const before = new Map(runs.map((r) => [r.id, r.status]));
      runs = (await call(`${base}/eval-runs`)).items;
      // Finished runs are plotted when the page opens, and a run as soon as it finishes.
      for (const run of runs) if (run.metrics && (firstLoad || before.get(run.id) !== run.status)) picked.add(run.id);
      firstLoad = false;
      fill(runRows, runs.length ? runs.map((r) => runRow(r, picked.has(r.id), actions))
        : h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No run yet.")));
      compare.update(runs);
      drawChart();
      if (!stopped && runs.some((r) => ACTIVE.has(r.status))) timer = setTimeout(loadRuns, POLL_MS);
    } catch (error) {
      toast(error.message, "error");
    }
  }
  async function loadSets() {
    const sets = await attempt(() => call(`${base}/eval-sets`));
    if (!sets) return;
    const remove = (set) => window.confirm(`Delete the set ${set.name}?`) &&
      attempt(async () => { await call(`${base}/eval-sets/${set.id}`, { method: "DELETE" }); toast(`${set.name} deleted.`); await loadSets(); });
    fill(setRows, sets.items.length ? sets.items.map((set) => setRow(set, canWrite, remove))
      : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No question set yet.")));
    const keep = starter.setSelect.value;
    fill(starter.setSelect, sets.items.map((set) => h("option", { value: set.id }, `${set.name} (${set.question_count})`)));
    if (sets.items.some((set) => set.id === keep)) starter.setSelect.value = keep;
  }

  root.append(
    canWrite ? h("div", { class: "grid2" }, uploadForm(kbId, loadSets), starter.form) : null,
    h("section", { class: "card", "aria-labelledby": "sets-title" }, h("h2", { id: "sets-title" }, "Question sets"),
      h("div", { class: "scroll" }, h("table", { id: "eval-set-table", class: "stack" },
        h("thead", {}, h("tr", {}, ["Name", "Questions", "Hops", "Tags", "Uploaded", ""].map((t) => h("th", { scope: "col" }, t)))), setRows))),
    h("section", { class: "card", "aria-labelledby": "runs-title" }, h("h2", { id: "runs-title" }, "Runs"),
      h("div", { class: "scroll" }, h("table", { id: "eval-run-table", class: "stack" },
        h("thead", {}, h("tr", {}, ["Plot", "Run", "Status", "Progress", "R@5", "MRR", ""].map((t) => h("th", { scope: "col" }, t)))), runRows))),
    h("section", { class: "card", "aria-labelledby": "chart-title" }, h("h2", { id: "chart-title" }, "Metrics"), chart),
    compare.form);
  loadSets();
  loadRuns();
  return () => { stopped = true; clearTimeout(timer); };
}
