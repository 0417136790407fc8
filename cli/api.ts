// A small HTTP client for the Orquesta API (Node's fetch). Errors keep the service's envelope
// {error: {type, code, message, doc_url, request_id}} so the CLI can print code, message and doc_url.
// Money-moving POSTs carry an Idempotency-Key, so a retry after a dropped connection or a 5xx/429
// reuses the same key and cannot charge twice.
import { randomUUID } from 'node:crypto';
import { CliError, ExitCode } from './exit-codes.js';
import { maskKey } from './config.js';
import { VERSION } from './version.js';

export interface ErrorEnvelope {
  type: string;
  code: string;
  message: string;
  doc_url?: string;
  request_id?: string;
}

/** The API answered an error envelope (or a non-2xx without one). */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly error: ErrorEnvelope,
  ) {
    super(ExitCode.API_ERROR, `${error.code}: ${error.message}`);
    this.name = 'ApiError';
  }
}

/** The API could not be reached, or did not answer in time. */
export class ConnectionError extends CliError {
  constructor(
    readonly url: string,
    readonly reason: unknown,
  ) {
    super(ExitCode.API_ERROR, `Cannot reach ${url}: ${describeCause(reason)}`, 'Check the base URL (`orquesta login`) and that the service is running (`orquesta status`).');
    this.name = 'ConnectionError';
  }
}

export function describeCause(e: unknown): string {
  const err = e as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  if (err?.name === 'AbortError') return 'aborted';
  return err?.cause?.code ?? err?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Sends `Idempotency-Key`; the same key is reused on retries. */
  idempotent?: boolean;
  /** Statuses returned instead of thrown (e.g. 503 of /health/ready). */
  accept?: number[];
  /** Retries on connection errors, 429 and 5xx (GET, and POSTs with an idempotency key). */
  retries?: number;
  timeoutMs?: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | undefined,
    readonly signal?: AbortSignal,
  ) {}

  get maskedKey(): string {
    return this.apiKey ? maskKey(this.apiKey) : '(no key)';
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    const url = this.baseUrl + path;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `orquesta-cli/${VERSION} node/${process.versions.node}` };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (opts.idempotent) headers['idempotency-key'] = randomUUID();
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const retryable = method === 'GET' || opts.idempotent === true;
    const retries = retryable ? (opts.retries ?? 2) : 0;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
        res = await fetch(url, { method, headers, body, signal: this.signal ? AbortSignal.any([this.signal, timeout]) : timeout });
      } catch (e) {
        if (this.signal?.aborted) throw e;
        if (attempt < retries && !isRefused(e)) {
          await sleep(300 * 3 ** attempt, this.signal);
          continue;
        }
        throw new ConnectionError(this.baseUrl, e);
      }
      const text = await res.text();
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if ((res.status === 429 || res.status >= 500) && attempt < retries && !opts.accept?.includes(res.status)) {
        const after = Number(res.headers.get('retry-after'));
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, 10) * 1000 : 300 * 3 ** attempt, this.signal);
        if (this.signal?.aborted) throw new DOMException('aborted', 'AbortError');
        continue;
      }
      if (res.ok || opts.accept?.includes(res.status)) return { status: res.status, body: parsed as T, headers: res.headers };
      const env = parsed?.error;
      if (env && typeof env.code === 'string') throw new ApiError(res.status, env as ErrorEnvelope);
      throw new ApiError(res.status, {
        type: 'api_error',
        code: `http_${res.status}`,
        message: `HTTP ${res.status} from ${method} ${path} without an error envelope${text ? `: ${text.slice(0, 200)}` : ''}`,
        request_id: res.headers.get('x-request-id') ?? undefined,
      });
    }
  }

  get<T = any>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('GET', path, opts);
  }

  post<T = any>(path: string, body: unknown, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...opts, body });
  }
}

function isRefused(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

export const isAbort = (e: unknown) => (e as { name?: string })?.name === 'AbortError';
