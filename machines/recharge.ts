// A mobile recharge: an aggregator order (machines/aggregator-order.ts). spec: States > recharge:
// created `pending` once the key and amounts are persisted; `delivered` on the aggregator's
// confirmation (ledger entry booked); `failed` when rejected. A timeout leaves it `pending`.
import { aggregatorOrderMachine } from './aggregator-order.js';

export const RECHARGE_STATES = ['pending', 'delivered', 'failed'] as const;
export type RechargeStatus = (typeof RECHARGE_STATES)[number];

export const rechargeMachine = aggregatorOrderMachine({ id: 'recharge', source: 'aggregator', done: 'delivered' });
