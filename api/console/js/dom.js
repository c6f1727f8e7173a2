// Element builders: text always goes in as text nodes, never as HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(el, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (name === "value" && "defaultValue" in el) {
      el.defaultValue = value; // what a form reset returns to
      el.value = value;
    } else if (name === "value" && "value" in el) {
      el.value = value;
    } else if (name === "checked" && "checked" in el) {
      el.defaultChecked = Boolean(value);
      el.checked = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** An HTML element: h("button", {type: "button", onclick}, "Save"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element, same call shape as `h`. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** A labelled form field: the label wraps its control, so clicking the text focuses it. */
export function field(label, control, hint) {
  return h("label", { class: "field" }, h("span", {}, label), control, hint ? h("small", {}, hint) : null);
}

/** Replace the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let toastTimer = null;
document.getElementById("toast").addEventListener("click", (event) => { event.currentTarget.hidden = true; });
const TOAST_MS = 6000;

/** A short message in the live region (errors and confirmations); a click dismisses it. */
export function toast(message, kind = "info") {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, TOAST_MS);
}

/** Run an async action, showing its error (the API's message) instead of throwing. */
export async function attempt(action) {
  try {
    return await action();
  } catch (error) {
    toast(error.message || String(error), "error");
    return undefined;
  }
}

export function shortId(id) {
  return String(id).slice(0, 8);
}

export function formatBytes(bytes) {
  const units = ["B", "KB", "MB", "GB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}
