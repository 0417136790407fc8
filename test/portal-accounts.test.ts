// Portal accounts (issue 29 part 2-3; docs/portal.md) against the running service: the signup's owner
// signs in with the same scrypt record; the session cookie's attributes; CSRF and Origin on every
// change; failed sign-ins throttled per address like API keys; TOTP with rotation at the second step
// and no replay; idle and absolute expiry; password reset through the outbox; invitations and roles
// mapped onto the API's scopes on the re-served /v1 routes; one tenant's member never sees another's
// data; keys issued in the portal work with the API; the audit log.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { PortalClient, inviteMember, lastNotification, signUpOwner, totpCode } from './helpers/portal.js';

// The file's own budget (the runner's per-file timeout is 120 s; a loaded machine needs more): told to tap's runner through the root test.
t.setTimeout(600_000);
let a: TestApp;
t.before(async () => {
  a = await startTestApp({ ROLE: 'api', AUTH_FAILURES_PER_MIN: '25' });
});
t.teardown(() => a.stop());

t.test('the signup owner signs in; the cookie; CSRF and Origin on changes; the /v1 routes through the session', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  const r = await c.signIn(o.email.toUpperCase(), o.password);
  t.equal(r.status, 200, r.text);
  t.equal(r.body.stage, 'full');
  t.equal(r.body.member.role, 'owner');
  const cookie = r.headers.get('set-cookie')!;
  t.match(cookie, /^orq_session=[A-Za-z0-9_-]{40,}; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=43200$/, 'HttpOnly, SameSite=Strict, absolute expiry; no Secure over plain http');
  t.notMatch(r.text, c.cookie.slice('orq_session='.length), 'the token is never in a body');

  const me = await c.call('GET', '/portal/api/session');
  t.equal(me.status, 200, me.text);
  t.equal(me.body.tenant.id, o.tenantId);
  t.equal(me.headers.get('cache-control'), 'no-store');

  // A change without the CSRF header, or from another origin, is refused before anything happens.
  const noCsrf = await c.call('POST', '/portal/api/v1/customers', { name: 'Ana' }, { 'x-csrf-token': '' });
  t.equal(noCsrf.status, 403);
  t.equal(noCsrf.body.error.code, 'portal.csrf_unauthorized');
  const evil = await c.call('POST', '/portal/api/v1/customers', { name: 'Ana' }, { origin: 'https://evil.example' });
  t.equal(evil.status, 403);
  t.equal(evil.body.error.code, 'portal.csrf_unauthorized');
  const evilSignIn = await new PortalClient(a).call('POST', '/portal/api/session', { email: o.email, password: o.password }, { origin: 'https://evil.example' });
  t.equal(evilSignIn.status, 403, 'a sign-in posted from another site is refused (login CSRF)');

  // The same /v1 operation, through the session; the audit log says who did it.
  const cu = await c.call('POST', '/portal/api/v1/customers', { name: 'Ana <b>López</b>', email: 'ana@example.mx' });
  t.equal(cu.status, 201, cu.text);
  const viaKey = await a.call('GET', `/v1/customers/${cu.body.id}`, { key: o.testKey });
  t.equal(viaKey.status, 200, 'the customer made in the portal is the API\'s customer');
  t.equal(viaKey.body.name, 'Ana <b>López</b>');
  const audit = await c.call('GET', '/portal/api/audit');
  t.equal(audit.status, 200);
  t.match(audit.body.data[0], { action: 'POST /v1/customers', target: cu.body.id, actor_email: o.email });
  t.ok(audit.body.data.some((e: any) => e.action === 'session.sign_in'));

  // Live mode through the toggle: the test customer is not there.
  c.mode = 'live';
  t.equal((await c.call('GET', `/portal/api/v1/customers/${cu.body.id}`)).status, 404);
  c.mode = 'test';

  const out = await c.call('DELETE', '/portal/api/session');
  t.equal(out.status, 200);
  t.equal((await c.call('GET', '/portal/api/session')).status, 401, 'signed out');
});

t.test('wrong passwords answer one 401 and are throttled per address like API keys', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  const unknown = await c.signIn('nobody@example.mx', 'whatever password');
  t.equal(unknown.status, 401);
  t.equal(unknown.body.error.code, 'portal.sign_in_invalid');
  let last = unknown;
  for (let i = 0; i < 60 && last.status !== 429; i++) last = await c.signIn(o.email, 'wrong password!!');
  t.equal(last.status, 429, 'past AUTH_FAILURES_PER_MIN the address is told to wait');
  t.ok(Number(last.headers.get('retry-after')) > 0);
  await a.app.deps.redis.eval(`for _, k in ipairs(redis.call('keys', ARGV[1])) do redis.call('del', k) end`, 0, `${a.config.redisPrefix}:*af:*`);
  // A visit without any session cookie (the sign-in page asks who is signed in) presents no credential:
  // never throttled, however many browsers behind one address open the portal.
  const anon = new PortalClient(a);
  let seen = new Set<number>();
  for (let i = 0; i < 60; i++) seen.add((await anon.call('GET', '/portal/api/session')).status);
  t.same([...seen], [401], 'sixty first visits from one address: 401, never 429');
  anon.cookie = `orq_session=${'A'.repeat(43)}`; // well formed, no such session
  seen = new Set<number>();
  for (let i = 0; i < 60 && !seen.has(429); i++) seen.add((await anon.call('GET', '/portal/api/session')).status);
  t.ok(seen.has(429), 'a wrong session cookie is still counted and throttled');
  await a.app.deps.redis.eval(`for _, k in ipairs(redis.call('keys', ARGV[1])) do redis.call('del', k) end`, 0, `${a.config.redisPrefix}:*af:*`);
});

t.test('TOTP: set up, a second step at sign-in with rotation, no replay; a team that requires it', async (t) => {
  await a.app.deps.redis.eval(`for _, k in ipairs(redis.call('keys', ARGV[1])) do redis.call('del', k) end`, 0, `${a.config.redisPrefix}:*af:*`);
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const setup = await c.call('POST', '/portal/api/me/totp');
  t.equal(setup.status, 200, setup.text);
  t.match(setup.body.otpauth_url, /^otpauth:\/\/totp\/Orquesta:/);
  const secret = setup.body.secret as string;
  t.equal((await c.call('POST', '/portal/api/me/totp/confirm', { code: '000000' === totpCode(secret) ? '111111' : '000000' })).status, 401, 'a wrong code does not turn it on');
  const on = await c.call('POST', '/portal/api/me/totp/confirm', { code: totpCode(secret) });
  t.equal(on.status, 200, on.text);
  t.equal(on.body.totp_enabled, true);
  const [row] = await a.app.deps.sql`select totp_secret_sealed from portal_members where lower(email) = ${o.email}`;
  t.notMatch(row.totp_secret_sealed, secret, 'sealed at rest');
  await c.call('DELETE', '/portal/api/session');

  const c2 = new PortalClient(a);
  const step = await c2.call('POST', '/portal/api/session', { email: o.email, password: o.password });
  t.equal(step.body.stage, 'totp');
  t.equal(step.body.member, undefined);
  const stepCookie = c2.cookie;
  t.equal((await c2.call('GET', '/portal/api/session')).status, 401, 'a password alone is not a session');
  t.equal((await c2.call('GET', '/portal/api/v1/customers')).status, 401);
  const bad = await c2.call('POST', '/portal/api/session/totp', { code: '123456' === totpCode(secret) ? '654321' : '123456' });
  t.equal(bad.status, 401);
  t.equal(bad.body.error.code, 'portal.totp_invalid');
  // The confirmation already used this time step's code: it cannot be replayed; the next step's code can.
  const replay = await c2.call('POST', '/portal/api/session/totp', { code: totpCode(secret) });
  t.equal(replay.status, 401, 'the code used to confirm cannot be used again');
  await a.app.deps.sql`update portal_members set totp_last_step = totp_last_step - 2 where lower(email) = ${o.email}`;
  const full = await c2.call('POST', '/portal/api/session/totp', { code: totpCode(secret) });
  t.equal(full.status, 200, full.text);
  t.equal(full.body.stage, 'full');
  t.not(c2.cookie, stepCookie, 'the session is rotated at the second step');
  t.equal((await c2.call('GET', '/portal/api/session')).status, 200);
  const old = new PortalClient(a);
  old.cookie = stepCookie;
  t.equal((await old.call('GET', '/portal/api/session')).status, 401, 'the step cookie is dead');

  // The owner requires 2FA for the team: a new member without it can only set it up.
  t.equal((await c2.call('PUT', '/portal/api/team/settings', { require_totp: true })).status, 200);
  const dev = await inviteMember(c2, 'developer');
  const blocked = await dev.client.call('GET', '/portal/api/v1/customers');
  t.equal(blocked.status, 403);
  t.equal(blocked.body.error.code, 'portal.totp_setup_required_unauthorized');
  const s = await dev.client.call('GET', '/portal/api/session');
  t.equal(s.body.totp_setup_required, true);
  const ds = await dev.client.call('POST', '/portal/api/me/totp');
  t.equal((await dev.client.call('POST', '/portal/api/me/totp/confirm', { code: totpCode(ds.body.secret) })).status, 200);
  t.equal((await dev.client.call('GET', '/portal/api/v1/customers')).status, 200, 'set up: in');
});

t.test('idle and absolute expiry', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  t.equal((await c.call('GET', '/portal/api/session')).status, 200);
  await a.app.deps.sql`update portal_sessions set last_seen_at = now() - interval '31 minutes' where member_id = (select id from portal_members where lower(email) = ${o.email})`;
  t.equal((await c.call('GET', '/portal/api/session')).status, 401, 'idle longer than PORTAL_SESSION_IDLE_MINUTES (30)');
  await c.signIn(o.email, o.password);
  t.equal((await c.call('GET', '/portal/api/session')).status, 200);
  await a.app.deps.sql`update portal_sessions set expires_at = now() - interval '1 second' where member_id = (select id from portal_members where lower(email) = ${o.email}) and ended_at is null`;
  t.equal((await c.call('GET', '/portal/api/session')).status, 401, 'past the absolute expiry, however active');
});

t.test('password reset through the notification outbox ends every session', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const anon = new PortalClient(a);
  t.equal((await anon.call('POST', '/portal/api/password_resets', { email: 'nobody-here@example.mx' })).status, 202, 'the same answer for an unknown email');
  t.equal((await anon.call('POST', '/portal/api/password_resets', { email: o.email })).status, 202);
  const mail = await lastNotification(a, o.email, 'portal_password_reset');
  t.match(mail.url, /\/portal#\/reset\//);
  t.equal((await anon.call('POST', '/portal/api/password_resets/confirm', { token: mail.token, password: 'a brand new password' })).status, 200);
  t.equal((await anon.call('POST', '/portal/api/password_resets/confirm', { token: mail.token, password: 'and another one!!' })).status, 404, 'a link works once');
  t.equal((await c.call('GET', '/portal/api/session')).status, 401, 'the old session ended');
  t.equal((await new PortalClient(a).signIn(o.email, o.password)).status, 401, 'the old password is gone');
  t.equal((await new PortalClient(a).signIn(o.email, 'a brand new password')).status, 200);
});

t.test('roles map onto scopes: a viewer cannot refund or change anything, a developer reads no books unless given the scope, tenants stay apart', async (t) => {
  const o = await signUpOwner(a);
  const owner = new PortalClient(a);
  await owner.signIn(o.email, o.password);
  const cu = await owner.call('POST', '/portal/api/v1/customers', { name: 'Cliente' });
  t.equal(cu.status, 201);

  const viewer = await inviteMember(owner, 'viewer');
  t.equal((await viewer.client.call('GET', `/portal/api/v1/customers/${cu.body.id}`)).status, 200, 'a viewer reads');
  const ref = await viewer.client.call('POST', '/portal/api/v1/refunds', { attempt_id: crypto.randomUUID() });
  t.equal(ref.status, 403);
  t.equal(ref.body.error.code, 'insufficient_scope');
  const mk = await viewer.client.call('POST', '/portal/api/v1/customers', { name: 'X' });
  t.equal(mk.status, 403, 'a change whose route names no scope needs payments:write');
  t.equal((await viewer.client.call('GET', '/portal/api/audit')).status, 403, 'the audit log is the owner\'s (and admins\')');
  t.equal((await viewer.client.call('POST', '/portal/api/team/invitations', { email: 'x@example.mx', role: 'admin' })).status, 403);

  const dev = await inviteMember(owner, 'developer');
  const polizas = await dev.client.call('GET', '/portal/api/v1/reports/polizas?format=contpaqi');
  t.equal(polizas.status, 403, `a developer does not see the books: ${polizas.text}`);
  t.equal(polizas.body.error.code, 'insufficient_scope');
  const team = await owner.call('GET', '/portal/api/team');
  const devId = team.body.members.find((m: any) => m.email === dev.email).id;
  const given = await owner.call('PATCH', `/portal/api/team/members/${devId}`, { extra_scopes: ['reports:read'] });
  t.equal(given.status, 200, given.text);
  t.not((await dev.client.call('GET', '/portal/api/v1/reports/polizas?format=contpaqi')).status, 403, 'given the scope, it passes the scope check');

  const acct = await inviteMember(owner, 'accountant');
  t.equal(acct.client.csrf.length > 20, true);
  t.not((await acct.client.call('GET', '/portal/api/v1/reports/polizas?format=contpaqi')).status, 403);

  // Owners stay: the last one cannot be demoted; an admin cannot touch an owner.
  const ownerId = team.body.members.find((m: any) => m.role === 'owner').id;
  const demote = await owner.call('PATCH', `/portal/api/team/members/${ownerId}`, { role: 'admin' });
  t.equal(demote.status, 409);
  t.equal(demote.body.error.code, 'portal.last_owner_conflict');
  const adm = await inviteMember(owner, 'admin');
  const touch = await adm.client.call('PATCH', `/portal/api/team/members/${ownerId}`, { status: 'disabled' });
  t.equal(touch.status, 403, 'an admin cannot disable an owner');
  t.equal(touch.body.error.code, 'insufficient_scope');
  const rule = await adm.client.call('PUT', '/portal/api/team/settings', { require_totp: true });
  t.equal(rule.status, 403, 'an admin (team:manage) cannot change the team-wide sign-in rule: owners only');
  t.equal(rule.body.error.code, 'insufficient_scope');

  // Another tenant's member sees none of this tenant's data, by id or in lists.
  const o2 = await signUpOwner(a, 'Otra Empresa SA');
  const other = new PortalClient(a);
  await other.signIn(o2.email, o2.password);
  t.equal((await other.call('GET', `/portal/api/v1/customers/${cu.body.id}`)).status, 404);
  const list = await other.call('GET', '/portal/api/v1/customers');
  t.notOk(list.body.data.some((x: any) => x.id === cu.body.id));
  t.equal((await other.call('PATCH', `/portal/api/team/members/${devId}`, { role: 'viewer' })).status, 404, 'nor its members');
});

t.test('API keys issued in the portal: the secret once, used with the API, rolled, revoked', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const k = await c.call('POST', '/portal/api/api_keys', { scopes: ['payments:read'] });
  t.equal(k.status, 201, k.text);
  t.match(k.body.key, /^sk_test_/);
  t.equal(k.headers.get('cache-control'), 'no-store');
  const list = await c.call('GET', '/portal/api/api_keys');
  t.ok(list.body.data.every((x: any) => !x.livemode), 'the mode shown');
  t.notMatch(list.text, k.body.key, 'the list never shows a secret');
  t.equal((await a.call('GET', '/v1/customers', { key: k.body.key })).status, 200, 'the key works with the API');
  t.equal((await a.call('POST', '/v1/customers', { key: k.body.key, body: { name: 'x' } })).status, 403, 'with its scopes');
  const rolled = await c.call('POST', `/portal/api/api_keys/${k.body.id}/roll`);
  t.equal(rolled.status, 201);
  t.equal((await a.call('GET', '/v1/customers', { key: k.body.key })).status, 401, 'the old key stops at once');
  t.equal((await a.call('GET', '/v1/customers', { key: rolled.body.key })).status, 200);
  t.equal((await c.call('DELETE', `/portal/api/api_keys/${rolled.body.id}`)).status, 200);
  t.equal((await a.call('GET', '/v1/customers', { key: rolled.body.key })).status, 401);
  c.mode = 'live';
  const live = await c.call('POST', '/portal/api/api_keys', { scopes: ['*'] });
  t.match(live.body.key, /^sk_live_/, 'the toggle issues live keys');
  const audit = await c.call('GET', '/portal/api/audit');
  t.ok(['api_key.created', 'api_key.rolled', 'api_key.revoked'].every((x) => audit.body.data.some((e: any) => e.action === x)));
  const other = await signUpOwner(a, 'Otra');
  const oc = new PortalClient(a);
  await oc.signIn(other.email, other.password);
  t.equal((await oc.call('DELETE', `/portal/api/api_keys/${live.body.id}`)).status, 404, 'another tenant cannot revoke it');
});

t.test("npm start's demo tenant comes with a portal owner who can sign in at once", async (t) => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { randomBytes } = await import('node:crypto');
  // Its own database: the shared test database must keep having no demo tenant (checkout.test says so).
  const url = new URL(a.config.databaseUrl);
  url.pathname = `/orquesta_test_demo_${randomBytes(4).toString('hex')}`;
  const d = await startTestApp({ ROLE: 'api', DATABASE_URL: url.toString(), SEED_DEMO_TENANT: 'true', STATE_DIR: mkdtempSync(join(tmpdir(), 'orq-demo-')) });
  t.teardown(async () => {
    await d.stop();
    await a.app.deps.sql.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
  });
  const demo = d.app.demo!;
  t.equal(demo.created, true);
  t.match(demo.portal_email, /^demo\+[0-9a-f]{8}@example\.com$/);
  const m = new PortalClient(d);
  t.equal((await m.signIn(demo.portal_email!, demo.portal_password!)).status, 200, 'the owner signs in with what the banner printed');
  const { ensureDemoTenant } = await import('../ops/bootstrap.js');
  const again = await ensureDemoTenant(d.app.deps.sql, d.config);
  t.same([again.created, again.portal_email, again.portal_password], [false, demo.portal_email, demo.portal_password], 'a later start reads them from the state file');
});
