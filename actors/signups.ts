// Public signup (decisions.md §4; docs/signup.md): POST /public/signup stores a pending signup (the
// password as an scrypt hash, never in clear) and a 6-digit verification code, sealed, delivered
// through the notification outbox and readable by operators at GET /admin/signups?email=; POST
// /public/signup/verify with the right code creates the tenant and its keys. Codes expire after 30
// minutes; five wrong guesses lock the signup until its code expires.
import { randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { hashPassword } from '../kernel/passwords.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { createTenantIn } from './tenants.js';
import { createOwnerIn } from './portal-accounts.js';

export { hashPassword, verifyPassword } from '../kernel/passwords.js';

export const CODE_TTL_MS = 30 * 60_000;
export const MAX_ATTEMPTS = 5;

const context = (id: string) => `signup:${id}:code`;
const norm = (email: string) => email.trim().toLowerCase();

export interface SignupBody {
  email: string;
  legal_name: string;
  password: string;
}

export class Signups {
  constructor(private d: { sql: Sql; secrets: SecretBox }) {}

  async signup(body: SignupBody) {
    const email = norm(body.email);
    const hash = await hashPassword(body.password);
    const id = randomUUID();
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const sealed = this.d.secrets.seal(code, context(id));
    const expires = new Date(Date.now() + CODE_TTL_MS);
    await this.d.sql.begin(async (tx) => {
      const [existing] = await tx`select id, status, code_expires_at from signups where lower(email) = ${email} for update`;
      if (existing && (existing.status === 'verified' || (existing.code_expires_at as Date) > new Date())) {
        throw new ApiError('signup.email_conflict', 'This email already signed up.');
      }
      // A pending signup whose code expired unused is replaced (a fresh password and code).
      if (existing) await tx`delete from signups where id = ${existing.id as string}`;
      await tx`
        insert into signups (id, email, legal_name, password_hash, status, code_sealed, code_expires_at)
        values (${id}, ${email}, ${body.legal_name}, ${hash}, 'pending_verification', ${sealed}, ${expires})`;
      await tx`
        insert into notification_outbox (id, channel, recipient, template, payload_sealed)
        values (${randomUUID()}, 'email', ${email}, 'signup_verification', ${this.d.secrets.seal(JSON.stringify({ code, legal_name: body.legal_name }), `notification:${email}`)})`;
    }).catch((e: unknown) => {
      if ((e as { code?: string }).code === '23505') throw new ApiError('signup.email_conflict', 'This email already signed up.');
      throw e;
    });
    return { object: 'signup' as const, status: 'pending_verification' as const, email, code_expires_at: expires.toISOString() };
  }

  async verify(body: { email: string; code: string }) {
    const email = norm(body.email);
    const out = await this.d.sql.begin(async (tx) => {
      const [s] = await tx`select * from signups where lower(email) = ${email} for update`;
      if (!s) return { error: new ApiError('signup.not_found') };
      if (s.status === 'verified') return { error: new ApiError('signup.already_verified_conflict') };
      const expired = (s.code_expires_at as Date) <= new Date();
      if ((s.failed_attempts as number) >= MAX_ATTEMPTS && !expired) return { error: new ApiError('signup.too_many_attempts') };
      const code = this.d.secrets.open(s.code_sealed as string, context(s.id as string));
      const given = Buffer.from(String(body.code).padEnd(6, ' ').slice(0, 16));
      const ok = !expired && given.length === Buffer.byteLength(code) && timingSafeEqual(given, Buffer.from(code));
      if (!ok) {
        // The wrong guess is counted (and committed) before answering.
        await tx`update signups set failed_attempts = failed_attempts + 1 where id = ${s.id as string}`;
        return { error: new ApiError('signup.invalid_code', expired ? 'The verification code expired: sign up again.' : 'The verification code is wrong.') };
      }
      const tenant = await createTenantIn(tx, s.legal_name as string);
      // The person who signed up signs in to the portal as the owner, with the same password (docs/portal.md).
      await createOwnerIn(tx, tenant.id, s.email as string, s.legal_name as string, s.password_hash as string);
      await tx`update signups set status = 'verified', tenant_id = ${tenant.id}, verified_at = now(), code_sealed = null where id = ${s.id as string}`;
      return { tenant };
    });
    if ('error' in out && out.error) throw out.error;
    const tenant = out.tenant!;
    return { object: 'signup' as const, status: 'verified' as const, email, tenant_id: tenant.id, api_keys: tenant.api_keys };
  }

  /** Operators: the signups of an email (or the latest 50), with the pending code. */
  async list(email?: string) {
    const rows = email
      ? await this.d.sql`select * from signups where lower(email) = ${norm(email)}`
      : await this.d.sql`select * from signups order by created_at desc limit 50`;
    return {
      object: 'list' as const,
      data: rows.map((s) => ({
        id: s.id as string,
        object: 'signup' as const,
        email: s.email as string,
        legal_name: s.legal_name as string,
        status: s.status as string,
        verification_code: s.status === 'pending_verification' && s.code_sealed ? this.d.secrets.open(s.code_sealed as string, context(s.id as string)) : null,
        code_expires_at: (s.code_expires_at as Date).toISOString(),
        failed_attempts: s.failed_attempts as number,
        tenant_id: (s.tenant_id as string | null) ?? null,
        created_at: (s.created_at as Date).toISOString(),
      })),
    };
  }
}
