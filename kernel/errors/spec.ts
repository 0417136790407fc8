// The shape of a catalog entry, and its two common constructors.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'authorization_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export interface ErrorSpec {
  readonly type: ErrorType;
  /** What it means and what to do about it, for /docs/errors. */
  readonly doc: string;
  /** Default message when the thrower gives none. */
  readonly message?: string;
}

export const inv = (doc: string, message?: string): ErrorSpec => ({ type: 'invalid_request_error', doc, message });
export const authz = (doc: string, message?: string): ErrorSpec => ({ type: 'authorization_error', doc, message });

