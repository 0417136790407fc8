// Writing an answer: status line and headers pre-encoded (uWS copies their bytes, no UTF-8
// conversion), JSON with nulls stripped, and every error as the spec's envelope.
import { STATUS_CODES } from 'node:http';
import { ApiError, envelopeJson, isApiError } from '../../kernel/errors.js';
import { answerJson } from '../../kernel/json.js';
import type { Logger } from '../../kernel/log.js';
import type { Reply } from '../route.js';
import type { HttpResponse } from '../uws.js';
import { writeCorsHeaders } from '../cors.js';

export const JSON_TYPE = 'application/json';

/** A constant for uWS as its own ArrayBuffer: uWS reads the bytes as they are (no UTF-8 conversion). */
const enc = (x: string): ArrayBuffer => {
  const b = Buffer.from(x, 'latin1');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
};
const STATUS_BUF: Record<number, ArrayBuffer> = {};
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_BUF[Number(code)] = enc(`${code} ${text}`);
const H_REQUEST_ID = enc('X-Request-Id');
const H_CONTENT_TYPE = enc('Content-Type');
const H_NOSNIFF = enc('X-Content-Type-Options');
const V_NOSNIFF = enc('nosniff');
/**
 * The value of X-Request-Id followed by the two constant headers of a JSON answer: uWS writes a
 * header as `name: value\r\n`, so one call writes the three lines a JSON answer always carries
 * (each call into uWS costs about as much as a header's bytes). Request ids are our UUIDs.
 */
const JSON_HEADERS_AFTER_ID = '\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff';

export function send(res: HttpResponse, requestId: string, reply: Reply, close = false, cors = false) {
  let payload: string | Uint8Array;
  let type = reply.contentType;
  if (reply.text !== undefined) payload = reply.text;
  else if (reply.body !== undefined) {
    // spec: null fields are omitted (authenticated responses; we omit them everywhere for one shape).
    payload = reply.keepNulls ? JSON.stringify(reply.body) : answerJson(reply.body);
    type ??= JSON_TYPE;
  } else payload = '';
  res.cork(() => {
    res.writeStatus(STATUS_BUF[reply.status] ?? String(reply.status));
    if (type === JSON_TYPE) res.writeHeader(H_REQUEST_ID, requestId + JSON_HEADERS_AFTER_ID);
    else {
      res.writeHeader(H_REQUEST_ID, requestId);
      if (type) res.writeHeader(H_CONTENT_TYPE, type.includes('charset') || !type.startsWith('text/') ? type : `${type}; charset=utf-8`);
      res.writeHeader(H_NOSNIFF, V_NOSNIFF);
    }
    if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]);
    if (cors) writeCorsHeaders(res);
    res.end(payload, close);
  });
}

/** The envelope of an error: an ApiError as it is; anything else is a 503 (a pool is down) or a logged 500. */
export function errorReply(e: unknown, requestId: string, route: string, log: Logger, baseUrl: string): Reply {
  let err: ApiError;
  if (isApiError(e)) err = e;
  else {
    const code = (e as { code?: string })?.code;
    const unavailable = code === 'ECONNREFUSED' || code === 'CONNECT_TIMEOUT' || code === 'CONNECTION_CLOSED' || /Connection is closed|ECONNREFUSED/.test(String((e as Error)?.message));
    err = new ApiError(unavailable ? 'service_unavailable' : 'internal_error');
    log.error('request failed', { requestId, route, err: e });
  }
  // The envelope's JSON from pre-serialised parts (the same bytes as answerJson(envelope(…))).
  return { status: err.status, text: envelopeJson(err, requestId, baseUrl), contentType: JSON_TYPE, headers: err.headers };
}
