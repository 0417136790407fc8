// The README's example session is pasted as written (issue 21 item 7): this file runs that very
// block with bash (-e -u -o pipefail: a failing command or an unset variable stops it) against a
// running development server, from a directory that holds `.orquesta/admin-key.json` as `npm start`
// leaves it; and no shell block of the README may hold a placeholder (`…`) or a tool a fresh
// machine lacks (`uuidgen`, `jq`) outside its comments.
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
// (curl prints no newline after a body, so a field printed next follows the previous `}`.)
import { startTestApp } from './helpers/app.js';

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');

/** The code of each ```sh block, without comment text (after an unquoted `#` at a word start). */
function shellBlocks(md: string): string[] {
  return [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}
const codeOnly = (line: string) => line.replace(/(^|\s)#.*$/, '');

t.test('no shell block of the README needs a placeholder or a missing tool', async (t) => {
  const blocks = shellBlocks(readme);
  t.ok(blocks.length >= 3, 'the README has its shell blocks');
  const bad = blocks.flatMap((b) => b.split('\n').map(codeOnly)).filter((line) => /…|\b(uuidgen|jq)\b/.test(line));
  t.same(bad, [], 'no command line holds `…`, `uuidgen` or `jq`');
});

t.test('the example session runs to the end as pasted', async (t) => {
  const section = readme.slice(readme.indexOf('## An example session'));
  const script = shellBlocks(section)[0];
  t.ok(script?.includes('/v1/payment_intents'), 'found the session');
  const a = await startTestApp({ NODE_ENV: 'development', ROLE: 'all', RELAY_INTERVAL_MS: '50', RATE_LIMIT_V1_PER_MIN: '100000' });
  const dir = await mkdtemp(join(tmpdir(), 'orq-readme-'));
  t.teardown(async () => {
    await a.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await mkdir(join(dir, '.orquesta'));
  // "in the clone": the session's SDK block imports ./dist/sdk/index.js (its packages resolve from the real path).
  await symlink(new URL('../../dist', import.meta.url).pathname, join(dir, 'dist'));
  await writeFile(join(dir, '.orquesta', 'admin-key.json'), JSON.stringify({ admin_key: a.adminKey }));
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, env: { ...process.env, ORQUESTA_BASE_URL: a.url } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(killer);
  t.equal(code, 0, `the session exits 0${code === 0 ? '' : `; stderr: ${err.slice(-2000)}`}`);
  t.match(out, /"object":"tenant"/, 'the operator made a tenant');
  t.match(out, /"code":"request\.invalid_body"/, 'the error example answers its code');
  t.match(out, /\}401$/m, 'the revoked key is refused');
  t.match(out, /[0-9a-f-]{36} succeeded$/m, 'the card payment succeeded');
  t.equal(out.match(/[0-9a-f-]{36} succeeded$/gm)?.length, 2, 'and the SPEI payment after the simulated transfer');
  t.match(out, /[0-9a-f-]{36} requires_action$/m, 'SPEI waited for the transfer');
  t.match(out, /"clabe":"\d{18}"/, 'SPEI instructions carry the CLABE');
  t.match(out, /^refunded 5000$/m, 'the intent shows the refunded amount');
  t.match(out, /^sdk payment [0-9a-f-]{36} is succeeded$/m, 'the SDK paid an OXXO voucher with the test helper');
  t.match(out, /"object":"webhook_endpoint","url":"http:\/\/localhost:3000\/webhooks"/, 'a local webhook endpoint is accepted');
  t.match(out, /\}stamped$/m, 'the invoice is stamped');
  t.match(out, /"object":"cash_cut"/, 'the cash cut answers');
  t.match(out, /"object":"service_payment"[^}]*"status":"paid"/, 'the CFE bill is paid');
  t.match(out, /"object":"recharge"[^}]*"phone_masked":"55\*{4}5678"[^}]*"status":"delivered"/, 'the recharge is delivered, its phone masked');
  t.match(out, /https:\/\/wa\.me\/52\d{10}\?text=/, 'the receivable has its WhatsApp link');
  t.match(out, /"object":"bank_statement"[^}]*"lines_total":1,"matched":1/, 'the statement line matches the SPEI payment');
  t.match(out, /"object":"health","status":"ok"/, 'ready');
  const pdf = await readFile(join(dir, 'factura.pdf'));
  t.equal(pdf.subarray(0, 5).toString(), '%PDF-', 'the invoice PDF was downloaded');
  t.notMatch(out, /"error":\{(?![^}]*request\.invalid_body)/, 'no other call answered an error');
});
