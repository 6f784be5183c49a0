// The documented API, from the console. The token lives in this module's memory only: a
// reload signs in again (nothing kept in the browser's storage or a cookie for a script to find).
let token = null;

export function setToken(value) { token = value; }
export function signedIn() { return token !== null; }

export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await response.json().catch(() => ({}));
  if (!response.ok || json.status === 'error') {
    throw new APIError(response.status, json.error || 'error', json.message || `HTTP ${response.status}`);
  }
  return json;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body ?? {});
export const put = (path, body) => api('PUT', path, body ?? {});
export const remove = (path) => api('DELETE', path);
