// Wiring of the billers, service payments and recharges capability: its actors and simulators,
// built once per process. ops/app.ts installs the capabilities and puts the actors in AppDeps.
import type { Sql } from '../kernel/db.js';
import type { EntityActor } from '../kernel/entity.js';
import type { Logger } from '../kernel/log.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { SimBillerGateway } from '../connectors/billers/sim.js';
import { SimRechargeAggregator } from '../connectors/recharge/sim.js';
import { Billers } from '../actors/billers.js';
import { Recharges } from '../actors/recharges.js';

export function createBillers(d: { sql: Sql; log: Logger; secrets: SecretBox; actor: EntityActor; onEvents?: () => void }) {
  const billers = new Billers({ sql: d.sql, actor: d.actor, log: d.log, gateway: new SimBillerGateway(d.sql) });
  const aggregator = new SimRechargeAggregator(d.sql);
  const recharges = new Recharges({ sql: d.sql, actor: d.actor, log: d.log, secrets: d.secrets, aggregator, onEvents: d.onEvents });
  return { billers, recharges, aggregator, capabilities: [billers.capability(), recharges.capability()] };
}
export type BillerServices = ReturnType<typeof createBillers>;
