// Structured logs, one JSON object a line. Secrets never reach the log: any field whose name
// looks like a credential is masked, and so is anything shaped like an API key or webhook secret.

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, 'silent'>;

const SECRET_FIELD = /(key|secret|password|token|authorization|clabe|phone)/i;
const SECRET_VALUE = /\b(sk_(test|live)_|whsec_|pi_secret_)[A-Za-z0-9_]+/g;
/** A CLABE (18 digits) inside a text: only its last four digits stay (architecture invariant 8). */
const CLABE_VALUE = /\b\d{14}(\d{4})\b/g;
/** A Mexican phone number (10 digits) inside a text: two digits, asterisks, the last four (the spec's mask). */
const PHONE_VALUE = /\b(\d{2})\d{4}(\d{4})\b/g;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[deep]';
  if (typeof value === 'string') return value.replace(SECRET_VALUE, '$1***').replace(CLABE_VALUE, '**************$1').replace(PHONE_VALUE, '$1****$2');
  if (value instanceof Error) return { name: value.name, message: redact(value.message), stack: redact(value.stack?.split('\n').slice(0, 6).join('\n')) };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_FIELD.test(k) && (typeof v === 'string' || typeof v === 'number') ? '***' : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: keyof typeof LEVELS, base: Record<string, unknown> = {}): Logger {
  const min = LEVELS[level];
  const write = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const line = JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...(redact({ ...base, ...fields }) as object) });
    (lvl === 'error' || lvl === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (f) => createLogger(level, { ...base, ...f }),
  };
}
