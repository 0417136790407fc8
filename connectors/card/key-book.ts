// The adapters' key book in Postgres (migration 0081): the first provider id recorded for a key wins.
import type { Sql } from '../../kernel/db.js';
import type { KeyBook } from './http.js';

export class SqlKeyBook implements KeyBook {
  constructor(private sql: Sql) {}
  async get(connectorKey: string, idempotencyKey: string): Promise<string | null> {
    const [r] = await this.sql`select provider_id from connector_refs where connector_key = ${connectorKey} and idempotency_key = ${idempotencyKey}`;
    return (r?.provider_id as string | undefined) ?? null;
  }
  async put(connectorKey: string, idempotencyKey: string, providerId: string, tenantId: string, livemode: boolean): Promise<void> {
    await this.sql`
      insert into connector_refs (connector_key, idempotency_key, provider_id, tenant_id, livemode)
      values (${connectorKey}, ${idempotencyKey}, ${providerId}, ${tenantId}, ${livemode}) on conflict do nothing`;
  }
}
