// The CLI's access to the Orquesta API: the SDK (sdk/index.ts, generated from the OpenAPI document)
// with the CLI's error types, so a command prints code, message and doc_url and exits 3. Typed
// operations go through `api.sdk` (charge, capture, trigger); the few raw reads of the operational
// routes (/health/live, /status, the event stream's headers) through `api.get`, which still takes
// the SDK's retries. Idempotency-Keys and the retry rule are the SDK's: one key per call, kept
// across its retries, so a retry after a dropped connection cannot charge twice.
import { CliError, ExitCode } from './exit-codes.js';
import { maskKey } from './config.js';
import { VERSION } from './version.js';
import { Orquesta, OrquestaConnectionError, OrquestaError, describeCause, type ErrorEnvelope } from '../sdk/index.js';

export { describeCause, type ErrorEnvelope };

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

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Statuses returned instead of thrown (e.g. 503 of /health/ready). */
  accept?: number[];
  /** Retries after a safe error (the SDK's rule); default 2. */
  retries?: number;
  timeoutMs?: number;
}

/** The SDK's errors as the CLI's (exit 3 with the envelope, or the connection failure). */
export function cliError(e: unknown): unknown {
  if (e instanceof OrquestaError) return new ApiError(e.status, e.error);
  if (e instanceof OrquestaConnectionError) return new ConnectionError(e.url, e.cause);
  return e;
}

/** Awaits an SDK call, its errors as the CLI's. */
export async function sdkCall<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw cliError(e);
  }
}

export class Api {
  /** The typed SDK for this base URL and key. */
  readonly sdk: Orquesta;

  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | undefined,
    readonly signal?: AbortSignal,
  ) {
    this.sdk = this.client({});
  }

  get maskedKey(): string {
    return this.apiKey ? maskKey(this.apiKey) : '(no key)';
  }

  private client(o: { retries?: number; timeoutMs?: number }): Orquesta {
    return new Orquesta({
      apiKey: this.apiKey,
      baseUrl: this.baseUrl,
      signal: this.signal,
      maxRetries: o.retries ?? 2,
      timeoutMs: o.timeoutMs ?? 15_000,
      userAgent: `orquesta-cli/${VERSION} node/${process.versions.node}`,
    });
  }

  /** A call by path (operational routes, headers wanted), through the SDK's fetch: key, retries, idempotency. */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    const sdk = opts.retries !== undefined || opts.timeoutMs !== undefined ? this.client(opts) : this.sdk;
    const init: RequestInit = { method };
    if (opts.body !== undefined) {
      init.body = JSON.stringify(opts.body);
      init.headers = { 'content-type': 'application/json' };
    }
    let res: Response;
    try {
      res = await sdk.send(new Request(this.baseUrl + path, init));
    } catch (e) {
      if (this.signal?.aborted) throw e;
      throw cliError(e instanceof OrquestaConnectionError ? e : new OrquestaConnectionError(this.baseUrl, e));
    }
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
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

  get<T = any>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('GET', path, opts);
  }

  post<T = any>(path: string, body: unknown, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...opts, body });
  }
}

export const isAbort = (e: unknown) => (e as { name?: string })?.name === 'AbortError';
