// API keys of the tenant (admin): create (the secret is shown once), list, revoke.

import { call } from "../api.js";
import { attempt, field, fill, h, toast } from "../dom.js";

const CAPABILITIES = ["read", "write", "manage_models", "admin"];

export function render(root) {
  const rows = h("tbody", { id: "key-rows" });
  const created = h("div", { id: "created-key", "aria-live": "polite" });
  const name = h("input", { name: "name", required: true, maxlength: 200 });
  const boxes = CAPABILITIES.map((cap) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "capability", value: cap, checked: cap === "read" }), ` ${cap}`));
  const form = h("form", { class: "card", id: "create-key" }, h("h2", {}, "New key"), field("Name", name),
    h("fieldset", {}, h("legend", {}, "Capabilities"), boxes), h("button", { type: "submit", class: "primary" }, "Create key"));
  async function load() {
    const keys = await attempt(() => call("/admin/api-keys"));
    if (!keys) return;
    fill(rows, keys.map((k) => h("tr", { dataset: { keyId: k.id } },
      h("td", {}, k.name), h("td", {}, h("code", {}, k.prefix)), h("td", {}, k.capabilities.join(", ")),
      h("td", {}, new Date(k.created_at).toLocaleString()),
      h("td", {}, k.revoked_at ? `revoked ${new Date(k.revoked_at).toLocaleString()}` : "active"),
      h("td", {}, k.revoked_at ? null : h("button", { type: "button", class: "danger", onclick: () => revoke(k) }, "Revoke")))));
  }
  async function revoke(key) {
    if (!window.confirm(`Revoke ${key.name}? Callers using it are refused at once.`)) return;
    await attempt(async () => { await call(`/admin/api-keys/${key.id}`, { method: "DELETE" }); toast(`${key.name} revoked.`); await load(); });
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const capabilities = [...form.querySelectorAll("input[name=capability]:checked")].map((b) => b.value);
    attempt(async () => {
      const key = await call("/admin/api-keys", { method: "POST", body: { name: name.value, capabilities } });
      const secret = h("input", { readonly: true, value: key.key, id: "new-key-value", class: "secret", "aria-label": "The new key" });
      fill(created, h("div", { class: "card notice" }, h("p", {}, "Copy this key now: it is not shown again."), secret,
        h("button", { type: "button", onclick: () => navigator.clipboard.writeText(key.key).then(() => toast("Copied."), () => toast("Select the key and copy it by hand.", "error")) }, "Copy")));
      form.reset();
      await load();
    });
  });
  fill(root, h("h1", {}, "API keys"), form, created,
    h("div", { class: "card scroll" }, h("table", { id: "key-table", class: "stack" },
      h("thead", {}, h("tr", {}, ["Name", "Prefix", "Capabilities", "Created", "State", ""].map((t) => h("th", { scope: "col" }, t)))), rows)));
  load();
  return null;
}
