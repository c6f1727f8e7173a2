// Sign-in, navigation and the hash router: each page renders into <main> and returns a cleanup.

import { ApiError, call, credentials } from "./api.js";
import { fill, h, shortId, toast } from "./dom.js";
import * as bases from "./pages/bases.js";
import * as chat from "./pages/chat.js";
import * as documents from "./pages/documents.js";
import * as evaluation from "./pages/evaluation.js";
import * as graph from "./pages/graph.js";
import * as keys from "./pages/keys.js";
import * as previews from "./pages/previews.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const signOutButton = document.getElementById("sign-out");

// Pages in the navigation; `needs` is the capability without which the link is hidden.
const PAGES = [
  { path: "bases", title: "Knowledge bases", module: bases },
  { path: "chat", title: "Chat", module: chat },
  { path: "graph", title: "Graph", module: graph },
  { path: "evaluation", title: "Evaluation", module: evaluation },
  { path: "previews", title: "Extraction previews", module: previews, needs: "manage_models" },
  { path: "keys", title: "API keys", module: keys, needs: "admin" },
];

let caller = null;
let cleanup = null;

function allowed(page) {
  return !page.needs || caller.capabilities.includes(page.needs);
}

function renderNav(current) {
  fill(nav, PAGES.filter(allowed).map((page) => h("a", {
    href: `#/${page.path}`,
    "aria-current": page.path === current ? "page" : null,
  }, page.title)));
}

function route() {
  if (cleanup) cleanup();
  cleanup = null;
  document.getElementById("toast").hidden = true; // a message belongs to the page it came from
  if (!caller) return;
  const [path = "bases", ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const page = PAGES.find((p) => p.path === path && allowed(p));
  renderNav(page ? page.path : "");
  main.replaceChildren();
  const ctx = { caller, params: rest };
  if (path === "bases" && rest.length) {
    cleanup = documents.render(main, { ...ctx, kbId: rest[0] });
  } else if (page) {
    document.title = `${page.title} · graphrag`;
    cleanup = page.module.render(main, ctx);
  } else {
    main.append(h("h1", {}, "Page not found"), h("p", {}, h("a", { href: "#/bases" }, "Back to the knowledge bases")));
  }
}

function showSignIn(message) {
  caller = null;
  nav.hidden = true;
  signOutButton.hidden = true;
  who.textContent = "";
  const input = h("input", { id: "api-key", name: "api-key", type: "password", autocomplete: "off", required: true, spellcheck: "false" });
  const error = h("p", { id: "sign-in-error", class: "error", role: "alert" }, message || "");
  const form = h("form", { id: "sign-in", class: "card narrow", "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Sign in"),
    h("p", {}, "Paste an API key (grk_…). It stays in this browser tab's session only."),
    h("label", { class: "field", for: "api-key" }, h("span", {}, "API key"), input),
    error,
    h("button", { type: "submit", class: "primary" }, "Sign in"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    credentials.set(input.value.trim());
    await start();
  });
  fill(main, form);
  input.focus();
}

async function start() {
  if (!credentials.key) {
    showSignIn();
    return;
  }
  try {
    caller = await call("/me");
  } catch (error) {
    credentials.clear();
    showSignIn(error instanceof ApiError && error.status === 401 ? "This key was refused." : error.message);
    return;
  }
  nav.hidden = false;
  signOutButton.hidden = false;
  who.textContent = `tenant ${shortId(caller.tenant_id)} · ${caller.capabilities.join(", ")}`;
  if (!location.hash) location.hash = "#/bases";
  route();
}

signOutButton.addEventListener("click", () => {
  if (cleanup) cleanup();
  cleanup = null;
  credentials.clear();
  location.hash = "";
  showSignIn();
  toast("Signed out.");
});
window.addEventListener("hashchange", route);
start();
