// A portal member in tests: signs up (the public signup, verified with the operator's view of the
// code), signs in with the session cookie, and calls the portal's routes like the browser does
// (cookie, X-CSRF-Token, Origin of the service itself, the test/live toggle). Messages of the
// notification outbox are opened with the service's secret box, as a mail sender would.
import { TOTP, Secret } from 'otpauth';
import { httpCall, type Res, type TestApp } from './app.js';

export class PortalClient {
  cookie = '';
  csrf = '';
  mode: 'test' | 'live' = 'test';
  constructor(readonly a: TestApp) {}

  async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> {
    const h: Record<string, string> = { origin: this.a.url, 'orquesta-mode': this.mode, ...headers };
    if (this.cookie) h.cookie = this.cookie;
    if (this.csrf && method !== 'GET' && !('x-csrf-token' in headers)) h['x-csrf-token'] = this.csrf;
    let text: string | undefined;
    if (body !== undefined) {
      text = JSON.stringify(body);
      h['content-type'] = 'application/json';
    }
    if (method === 'POST' && path.startsWith('/portal/api/v1/') && !h['idempotency-key']) h['idempotency-key'] = crypto.randomUUID();
    const r = await httpCall(this.a.url + path, method, h, text);
    const set = r.headers.get('set-cookie');
    if (set) {
      const m = /orq_session=([^;]*)/.exec(set);
      if (m) this.cookie = m[1] ? `orq_session=${m[1]}` : '';
    }
    let parsed: any;
    try {
      parsed = r.text ? JSON.parse(r.text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed?.csrf_token) this.csrf = parsed.csrf_token;
    return { status: r.status, headers: r.headers, body: parsed, text: r.text };
  }

  async signIn(email: string, password: string, totpSecret?: string) {
    const r = await this.call('POST', '/portal/api/session', { email, password });
    if (r.status !== 200) return r;
    if (r.body.stage === 'totp' && totpSecret) return this.call('POST', '/portal/api/session/totp', { code: totpCode(totpSecret) });
    return r;
  }
}

export function totpCode(secret: string, at = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), period: 30, digits: 6, algorithm: 'SHA1' }).generate({ timestamp: at });
}

/** The latest message of a template sent to an email, opened. */
export async function lastNotification(a: TestApp, email: string, template: string): Promise<Record<string, any>> {
  const [row] = await a.app.deps.sql`select payload_sealed from notification_outbox where recipient = ${email.toLowerCase()} and template = ${template} order by created_at desc limit 1`;
  if (!row) throw new Error(`no ${template} for ${email}`);
  return JSON.parse(a.app.deps.secrets.open(row.payload_sealed as string, `notification:${email.toLowerCase()}`));
}

export const newEmail = (who = 'owner') => `${who}+${crypto.randomUUID().slice(0, 8)}@example.mx`;

/** Signup → verify: a new tenant whose owner can sign in to the portal. */
export async function signUpOwner(a: TestApp, legalName = 'Tacos El Güero SA de CV') {
  const email = newEmail();
  const password = 'correct horse battery';
  const s = await a.call('POST', '/public/signup', { body: { email, legal_name: legalName, password } });
  if (s.status !== 202) throw new Error(`signup: ${s.status} ${s.text}`);
  const code = (await a.admin('GET', `/admin/signups?email=${encodeURIComponent(email)}`)).body.data[0].verification_code as string;
  const v = await a.call('POST', '/public/signup/verify', { body: { email, code } });
  if (v.status !== 200) throw new Error(`verify: ${v.status} ${v.text}`);
  const testKey = v.body.api_keys.find((k: any) => !k.livemode).key as string;
  return { email, password, tenantId: v.body.tenant_id as string, testKey };
}

/** An owner invites someone with a role; the invitation is accepted and the new member signed in. */
export async function inviteMember(owner: PortalClient, role: string) {
  const email = newEmail(role);
  const inv = await owner.call('POST', '/portal/api/team/invitations', { email, role });
  if (inv.status !== 201) throw new Error(`invite: ${inv.status} ${inv.text}`);
  const { token } = await lastNotification(owner.a, email, 'portal_invitation');
  const m = new PortalClient(owner.a);
  const r = await m.call('POST', '/portal/api/invitations/accept', { token, name: `Persona ${role}`, password: 'another good password' });
  if (r.status !== 200) throw new Error(`accept: ${r.status} ${r.text}`);
  return { client: m, email, password: 'another good password' };
}
