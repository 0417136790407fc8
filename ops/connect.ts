// Wiring of the onboarding, Connect and payouts capability: its actors, rails and credentials,
// built once per process. ops/app.ts installs `capability` into the runtime and puts the actors in
// AppDeps.
import type { Config } from './config.js';
import type { Sql } from '../kernel/db.js';
import type { EntityActor } from '../kernel/entity.js';
import type { JobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { SimPayoutRail } from '../connectors/payout/sim.js';
import { StpPayoutRail } from '../connectors/payout/stp.js';
import { SimTaxpayerScreen, TableTaxpayerScreen } from '../connectors/taxpayer-lists.js';
import { Connect } from '../actors/connect.js';
import { Onboarding } from '../actors/onboarding.js';
import { PayoutCredentials } from '../actors/payout-credentials.js';
import { Payouts } from '../actors/payouts.js';
import type { SecretBox } from './secret-box.js';

export function createConnect(d: { config: Config; sql: Sql; log: Logger; secrets: SecretBox; actor: EntityActor; enqueue(j: JobRequest): Promise<void> }) {
  const { sql, secrets, actor } = d;
  const payoutCredentials = new PayoutCredentials({ sql, secrets });
  const rails = {
    sim: new SimPayoutRail(sql),
    stp: new StpPayoutRail({ baseUrl: d.config.stpApiUrl, credentials: (t, l) => payoutCredentials.stpFor(t, l), timeoutMs: 8000 }),
  };
  const payouts = new Payouts({
    sql, actor, secrets, log: d.log, rails, enqueue: d.enqueue,
    hasCredentials: (t, l, c) => payoutCredentials.has(t, l, c),
    stpEmpresa: (t) => payoutCredentials.stpEmpresa(t),
  });
  const onboarding = new Onboarding({ sql, actor, secrets, screens: { test: new SimTaxpayerScreen(), live: new TableTaxpayerScreen(sql) } });
  const connect = new Connect({ sql, actor, secrets, onboarding, payouts });
  return { onboarding, connect, payouts, payoutCredentials, rails, capability: payouts.capability() };
}
export type ConnectServices = ReturnType<typeof createConnect>;
