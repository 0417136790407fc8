// Signup → verify → a working key (decisions.md §4), against the running service: scrypt at rest,
// 409 for an email already signed up, the code through the outbox and the operator's view, wrong
// codes counted and locked, expiry.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { verifyPassword } from '../actors/signups.js';

let a: TestApp;
t.before(async () => {
  a = await startTestApp({ ROLE: 'api' });
});
t.teardown(() => a.stop());

const email = () => `owner+${crypto.randomUUID().slice(0, 8)}@example.mx`;
const code = async (e: string) => (await a.admin('GET', `/admin/signups?email=${encodeURIComponent(e)}`)).body.data[0].verification_code as string;

t.test('signup → verify → a working key', async (t) => {
  const e = email();
  const password = 'correct horse battery';
  const r = await a.call('POST', '/public/signup', { body: { email: e, legal_name: 'Tacos El Güero SA de CV', password } });
  t.equal(r.status, 202, r.text);
  t.match(r.body, { object: 'signup', status: 'pending_verification' });
  const [row] = await a.app.deps.sql`select password_hash, code_sealed from signups where lower(email) = ${e}`;
  t.match(row.password_hash, /^scrypt\$16384\$8\$1\$/, 'scrypt');
  t.notMatch(row.password_hash, password, 'never in clear');
  t.ok(await verifyPassword(password, row.password_hash));
  t.notOk(await verifyPassword('wrong password!', row.password_hash));
  const [mail] = await a.app.deps.sql`select template, payload_sealed from notification_outbox where recipient = ${e}`;
  t.equal(mail.template, 'signup_verification', 'the code goes out through the outbox');
  const c = await code(e);
  t.match(c, /^\d{6}$/);
  t.notMatch(mail.payload_sealed, c, 'sealed in the outbox');
  t.notMatch(row.code_sealed, c);

  const dup = await a.call('POST', '/public/signup', { body: { email: e.toUpperCase(), legal_name: 'Otro', password: 'another password' } });
  t.equal(dup.status, 409);
  t.equal(dup.body.error.code, 'signup.email_conflict');

  const v = await a.call('POST', '/public/signup/verify', { body: { email: e, code: c } });
  t.equal(v.status, 200, v.text);
  t.match(v.body, { object: 'signup', status: 'verified' });
  const key = v.body.api_keys.find((k: any) => !k.livemode).key;
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 1000, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(pi.status, 201, 'the new key works');
  const [tenant] = await a.app.deps.sql`select name from tenants where id = ${v.body.tenant_id}`;
  t.equal(tenant.name, 'Tacos El Güero SA de CV');
  const again = await a.call('POST', '/public/signup/verify', { body: { email: e, code: c } });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'signup.already_verified_conflict');
  const listed = await a.admin('GET', `/admin/signups?email=${encodeURIComponent(e)}`);
  t.match(listed.body.data[0], { status: 'verified', verification_code: null, tenant_id: v.body.tenant_id });
  t.notMatch(listed.text, password);
  const dupVerified = await a.call('POST', '/public/signup', { body: { email: e, legal_name: 'X', password: 'another password' } });
  t.equal(dupVerified.status, 409);
});

t.test('wrong codes are counted and lock the signup; codes expire', async (t) => {
  const e = email();
  await a.call('POST', '/public/signup', { body: { email: e, legal_name: 'Lock SA', password: 'long enough pw' } });
  const c = await code(e);
  const wrong = c === '000000' ? '000001' : '000000';
  for (let i = 0; i < 5; i++) {
    const r = await a.call('POST', '/public/signup/verify', { body: { email: e, code: wrong } });
    t.equal(r.body.error.code, 'signup.invalid_code', `guess ${i + 1}`);
    t.equal(r.status, 400);
  }
  const locked = await a.call('POST', '/public/signup/verify', { body: { email: e, code: c } });
  t.equal(locked.body.error.code, 'signup.too_many_attempts', 'even the right code is refused once locked');
  // Expire it: the code is refused, and the email may sign up again.
  await a.app.deps.sql`update signups set code_expires_at = now() - interval '1 second' where lower(email) = ${e}`;
  const expired = await a.call('POST', '/public/signup/verify', { body: { email: e, code: c } });
  t.equal(expired.body.error.code, 'signup.invalid_code');
  const fresh = await a.call('POST', '/public/signup', { body: { email: e, legal_name: 'Lock SA', password: 'long enough pw' } });
  t.equal(fresh.status, 202, 'an expired pending signup is replaced');
  t.equal((await a.call('POST', '/public/signup/verify', { body: { email: e, code: await code(e) } })).status, 200);
});

t.test('validation and unknown email', async (t) => {
  const short = await a.call('POST', '/public/signup', { body: { email: email(), legal_name: 'X', password: 'short' } });
  t.equal(short.status, 400);
  t.equal(short.body.error.code, 'signup.invalid_body');
  const bad = await a.call('POST', '/public/signup', { body: { email: 'not-an-email', legal_name: 'X', password: 'long enough pw' } });
  t.equal(bad.body.error.code, 'signup.invalid_body');
  const none = await a.call('POST', '/public/signup/verify', { body: { email: email(), code: '123456' } });
  t.equal(none.status, 404);
  t.equal(none.body.error.code, 'signup.not_found');
});
