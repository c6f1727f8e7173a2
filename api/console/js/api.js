// The REST API as the console calls it: bearer key from sessionStorage, JSON errors as ApiError.

const KEY_NAME = "graphrag.apiKey";
export const API = "/api/v1";

export const credentials = {
  get key() { return sessionStorage.getItem(KEY_NAME); },
  set(key) { sessionStorage.setItem(KEY_NAME, key); },
  clear() { sessionStorage.removeItem(KEY_NAME); },
};

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

function authHeaders() {
  const key = credentials.key;
  return key ? { Authorization: `Bearer ${key}` } : {};
}

async function errorOf(response) {
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  const error = body && body.error ? body.error : {};
  return new ApiError(
    response.status,
    error.code || "http_error",
    error.message || `${response.status} ${response.statusText}`,
    error.details,
  );
}

/** Call the API; `body` is sent as JSON; answers the parsed JSON (null for 204). */
export async function call(path, { method = "GET", body, signal } = {}) {
  const headers = authHeaders();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(API + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return null;
  return response.json();
}

/** POST a multipart form (a file and its fields); answers the parsed JSON. */
export async function postForm(path, form) {
  const response = await fetch(API + path, { method: "POST", headers: authHeaders(), body: form });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** Upload one file with XHR (fetch reports no upload progress); `onProgress(fraction)`. */
export function uploadFile(kbId, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${API}/knowledge-bases/${kbId}/knowledge/file`);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      const body = xhr.response || {};
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(body);
      } else {
        const error = body.error || {};
        reject(new ApiError(xhr.status, error.code || "http_error", error.message || `upload failed (${xhr.status})`, error.details));
      }
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "network", "the upload was interrupted")));
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  return data.length ? { name, data: JSON.parse(data.join("\n")) } : null;
}

/** POST `body` and yield the Server-Sent Events of the answer as {name, data}, as they arrive. */
export async function* streamEvents(path, body, signal) {
  const response = await fetch(API + path, {
    method: "POST",
    headers: { ...authHeaders(), "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replaceAll("\r\n", "\n");
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const event = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event) yield event;
      cut = buffer.indexOf("\n\n");
    }
  }
}
