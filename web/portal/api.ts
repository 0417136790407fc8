// Calls from the portal: the /v1 operations under /portal/api/v1 and the portal's own routes under
// /portal/api. The session cookie goes by itself (HttpOnly: this code never sees it); every change
// carries X-CSRF-Token, the mode toggle's header, and (a POST to /v1) a fresh Idempotency-Key.
import { store } from './state.js';

export class ApiFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

interface Opts { raw?: Blob | ArrayBuffer | string; contentType?: string; accept?: string; idempotencyKey?: string }

async function send(method: string, path: string, body?: unknown, o: Opts = {}): Promise<Response> {
  const c = store.getSnapshot().context;
  const headers: Record<string, string> = { 'orquesta-mode': c.mode, accept: o.accept ?? 'application/json' };
  if (method !== 'GET' && c.session) headers['x-csrf-token'] = c.session.csrf_token;
  let payload: BodyInit | undefined;
  if (o.raw !== undefined) {
    payload = o.raw as BodyInit;
    if (o.contentType) headers['content-type'] = o.contentType;
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  if (method === 'POST' && path.startsWith('/v1/')) headers['idempotency-key'] = o.idempotencyKey ?? uuid();
  const r = await fetch(`/portal/api${path}`, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
  if (r.status === 401 && !path.startsWith('/session')) store.trigger.signedOut();
  if (!r.ok) {
    let code = 'error';
    let message = `${r.status}`;
    try {
      const j = await r.json();
      code = j.error?.code ?? code;
      message = j.error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new ApiFailure(r.status, code, message);
  }
  return r;
}

export async function api<T = any>(method: string, path: string, body?: unknown, o: Opts = {}): Promise<T> {
  const r = await send(method, path, body, o);
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A file from the API (XML, PDF, pólizas) saved by the browser under its name. */
export async function download(path: string, filename: string, accept = '*/*'): Promise<void> {
  const r = await send('GET', path, undefined, { accept });
  const blob = await r.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
