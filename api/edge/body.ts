// The request body as it streams in: kept while under the route's limit (text for JSON routes,
// bytes for raw ones), read and dropped when over it (so that the 413 can close the connection with
// nothing unread), then parsed once the handler's turn comes. The JSON rules are in api/body.ts.
import { ApiError } from '../../kernel/errors.js';
import { stripNulls } from '../../kernel/json.js';
import { jsonContentType, parseJsonBody } from '../body.js';
import type { Compiled } from './route-table.js';
import { JSON_TYPE } from './reply.js';

/** Body reading states. */
export const NO_BODY = 0;
export const READING = 1;
export const READ = 2;
/** Over the limit: the rest is read and dropped, so that the 413 can close the connection with nothing unread. */
export const DRAINING = 3;
export const TOO_LARGE = 4;
/** A body over the limit is read and dropped up to this many times the limit, then answered 413 and closed. */
export const DRAIN_FACTOR = 4;

/** takeChunk's answers. */
export const MORE = 0;
export const COMPLETE = 1;
/** Past DRAIN_FACTOR times the limit: answer 413 now. */
export const GIVE_UP = 2;

/** What the body step keeps on the request's Exchange. */
export interface BodyBuffer {
  bodyState: number;
  bodySize: number;
  bodyChunks: Buffer[] | null;
  bodyText: string;
  /** The bytes of a raw-body route, once read. */
  rawBytes: Buffer | null;
  /** The body text as received, kept for routes that verify a signature over it (RouteDef.signedBody). */
  rawBody: string | undefined;
}

/** Takes one chunk from uWS (whose memory uWS reuses after the callback: what is kept is copied). */
export function takeChunk(b: BodyBuffer, c: Compiled, chunk: ArrayBuffer, isLast: boolean): number {
  const state = b.bodyState;
  if (state !== READING && state !== DRAINING) return MORE;
  const n = chunk.byteLength;
  b.bodySize += n;
  const limit = c.bodyLimit;
  if (b.bodySize > limit) {
    if (state === READING) {
      b.bodyState = DRAINING;
      b.bodyChunks = null;
      b.bodyText = '';
    }
    if (!isLast && b.bodySize > limit * DRAIN_FACTOR) {
      // Past what is worth reading: answer now and close (the client may see a reset while sending).
      b.bodyState = TOO_LARGE;
      return GIVE_UP;
    }
  } else if (c.raw) {
    // A file: its bytes as they are.
    (b.bodyChunks ??= []).push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      b.rawBytes = b.bodyChunks.length === 1 ? b.bodyChunks[0] : Buffer.concat(b.bodyChunks, b.bodySize);
      b.bodyChunks = null;
    }
  } else if (c.body) {
    if (isLast && b.bodyChunks === null) {
      // The usual small body: one chunk, decoded while uWS still owns its memory.
      b.bodyText = n ? Buffer.from(chunk, 0, n).toString('utf8') : '';
    } else {
      (b.bodyChunks ??= []).push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        b.bodyText = Buffer.concat(b.bodyChunks).toString('utf8');
        b.bodyChunks = null;
      }
    }
  }
  if (!isLast) return MORE;
  b.bodyState = b.bodyState === DRAINING ? TOO_LARGE : READ;
  return COMPLETE;
}

/** The 413 of a route (its own code when it names one). */
export function tooLarge(c: Compiled, declared: string | undefined): ApiError {
  return new ApiError(c.def.tooLarge ?? 'request.too_large', `The body${declared ? ` (${declared} bytes)` : ''} is larger than the ${c.bodyLimit} bytes this route accepts.`);
}

/**
 * The body as the route takes it, before validation: the bytes of a raw route (empty when none was
 * sent), the parsed JSON of a JSON route (`{}` for an empty body, nulls stripped: a null field means
 * "not sent"), undefined for a route without a body.
 */
export function parsedBody(b: BodyBuffer, c: Compiled, contentType: string | undefined): unknown {
  if (c.raw) {
    const bytes = b.rawBytes ?? Buffer.alloc(0);
    b.rawBytes = null;
    return bytes;
  }
  if (b.bodyState !== READ || !c.body) return undefined;
  const text = b.bodyText;
  b.bodyText = '';
  if (c.def.signedBody) b.rawBody = text;
  if (text.trim() === '') return {};
  if (contentType !== undefined && contentType !== JSON_TYPE && !jsonContentType(contentType)) {
    throw new ApiError('request.unsupported_media_type', `The body is declared as "${contentType}", which cannot be JSON. Send JSON with Content-Type: application/json.`);
  }
  const parsed = parseJsonBody(text);
  // A null field means "not sent" (spec: tip_minor null/omitted = 0; patch: null = untouched).
  return text.includes('null') ? stripNulls(parsed) : parsed;
}
