// A tenant's STP credentials (empresa, its paying account, the company private key and its
// passphrase), per mode. Stored sealed (ops/secret-box.ts); the API shows only the company code,
// the masked account and the public key's fingerprint, never the key or the passphrase.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { checkClabe, maskClabe } from '../formats/clabe.js';
import type { StpCredentials } from '../connectors/payout/stp-mapping.js';
import type { SecretBox } from '../kernel/secret-box.js';

export interface StpCredentialsInput {
  empresa: string;
  cuenta_ordenante: string;
  nombre_ordenante?: string;
  rfc_curp_ordenante?: string;
  private_key_pem: string;
  passphrase: string;
}

const context = (tenantId: string, livemode: boolean) => `payout_credentials:${tenantId}:${livemode ? 'live' : 'test'}:stp`;

function view(r: Record<string, unknown>) {
  return {
    object: 'payout_credentials' as const,
    connector_key: r.connector_key as 'stp',
    empresa: r.empresa as string,
    cuenta_ordenante_masked: r.cuenta_masked as string,
    key_fingerprint: r.key_fingerprint as string,
    livemode: r.livemode as boolean,
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

export class PayoutCredentials {
  constructor(private d: { sql: Sql; secrets: SecretBox }) {}

  /** Stores (or replaces) the STP credentials of the key's mode; the private key must open with the passphrase. */
  async putStp(p: Principal, body: StpCredentialsInput) {
    const account = checkClabe(body.cuenta_ordenante);
    if (!account.ok) throw new ApiError('payout_credentials.invalid', `cuenta_ordenante: ${account.message}`);
    let fingerprint: string;
    try {
      const key = createPrivateKey({ key: body.private_key_pem, format: 'pem', passphrase: body.passphrase });
      if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
      fingerprint = createHash('sha256').update(createPublicKey(key).export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
    } catch {
      throw new ApiError('payout_credentials.invalid', 'private_key_pem does not open with this passphrase as an RSA private key (PEM). STP signs with the company RSA key; check the file and the passphrase.');
    }
    const secret: StpCredentials = {
      empresa: body.empresa, cuentaOrdenante: account.clabe, nombreOrdenante: body.nombre_ordenante, rfcCurpOrdenante: body.rfc_curp_ordenante,
      privateKeyPem: body.private_key_pem, passphrase: body.passphrase,
    };
    const [row] = await this.d.sql`
      insert into payout_credentials (tenant_id, livemode, connector_key, empresa, cuenta_masked, key_fingerprint, sealed)
      values (${p.tenantId}, ${p.livemode}, 'stp', ${body.empresa}, ${maskClabe(account.clabe)}, ${fingerprint}, ${this.d.secrets.seal(JSON.stringify(secret), context(p.tenantId, p.livemode))})
      on conflict (tenant_id, livemode, connector_key) do update
        set empresa = excluded.empresa, cuenta_masked = excluded.cuenta_masked, key_fingerprint = excluded.key_fingerprint, sealed = excluded.sealed, updated_at = now()
      returning *`;
    return view(row);
  }

  async getStp(p: Principal) {
    const [row] = await this.d.sql`select * from payout_credentials where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = 'stp'`;
    if (!row) throw new ApiError('payout_credentials.not_found', 'No STP credentials are stored for this mode: PUT /v1/connectors/stp/credentials.');
    return view(row);
  }

  async has(tenantId: string, livemode: boolean, connectorKey: string): Promise<boolean> {
    const rows = await this.d.sql`select 1 from payout_credentials where tenant_id = ${tenantId} and livemode = ${livemode} and connector_key = ${connectorKey}`;
    return rows.length > 0;
  }

  /** The company code STP knows this tenant by (to check a callback), or undefined. */
  async stpEmpresa(tenantId: string, livemode = true): Promise<string | undefined> {
    const [row] = await this.d.sql`select empresa from payout_credentials where tenant_id = ${tenantId} and livemode = ${livemode} and connector_key = 'stp'`;
    return row?.empresa as string | undefined;
  }

  /** The credentials in clear, in memory only, for the STP adapter (StpRailOptions.credentials). */
  async stpFor(tenantId: string, livemode: boolean): Promise<StpCredentials | null> {
    const [row] = await this.d.sql`select sealed from payout_credentials where tenant_id = ${tenantId} and livemode = ${livemode} and connector_key = 'stp'`;
    return row ? (JSON.parse(this.d.secrets.open(row.sealed as string, context(tenantId, livemode))) as StpCredentials) : null;
  }
}
