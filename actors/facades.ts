// The capabilities written as plain functions (`fn(deps, ...args)`), grouped per resource. ops/app.ts
// binds them to the process's dependencies once (kernel/facade.ts bindGroups), and the edge calls
// them as `ctx.deps.<group>.<command>(...)`: a handler never holds a pool. Capabilities written as
// classes (PaymentIntents, Refunds, Invoices, ...) are facades already and are given as they are.
// A new resource whose commands are plain functions adds its group here.
import { nowFor } from '../kernel/clock.js';
import { onSql } from '../kernel/facade.js';
import type { Principal } from '../kernel/principal.js';
import { appendAudit, exportAudit, listAudit } from './audit.js';
import { balance } from './balance.js';
import { inspect, type InspectKind } from './inspect.js';
import { auditSnapshot, payoutApprovalLivemode } from './operator-snapshots.js';
import {
  applicationReview, deactivateRiskRule, listApplications, listApprovals, listConnectAccounts, listRiskReviews, listRiskRules, listTenants, releaseTenant, suspendTenant, tenantDetail,
} from './operator-views.js';
import type { AuditActor } from './audit.js';
import type { JobHistory } from '../kernel/job-history.js';
import { getStatement, importStatement, listLines, listStatements, reconciliation, rematchStatement } from './bank-statements.js';
import { checkoutConfig, checkReturnUrl, getCheckoutSettings, publicConfirm, publicGet, putCheckoutSettings, threeDsReturnUrl } from './checkout.js';
import { createCustomer, deleteCustomer, getCustomer, listCustomers, updateCustomer } from './customers.js';
import { listDisputes } from './disputes.js';
import { listEvents } from './events.js';
import { getFiscalProfile, issuerBySlug, putFiscalProfile, type FiscalDeps } from './fiscal-profile.js';
import { complete3ds, simulateInbound } from './inbound.js';
import { reviewView } from './payment-intents.js';
import { createLink, demoTenantId, getLink, intentForLink, listLinks, payableIntent } from './payment-links.js';
import { anomalies } from './reports/anomalies.js';
import { cashCut } from './reports/cash-cut.js';
import { feeLeakage, savings } from './reports/contracts.js';
import { closePeriod, getAccountMapping, polizas, putAccountMapping, trialBalance } from './reports/ledger.js';
import { paymentsPage } from './reports/payments.js';
import { createRule } from './risk.js';
import { createApiKey, createTenant, listApiKeys, revokeApiKey, updateSettings } from './tenants.js';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret } from './webhook-endpoints.js';
import type { FiscalProfileBody } from '../schemas/invoices.js';
import type { Logger } from '../kernel/log.js';
import type { Sql } from '../kernel/db.js';

export const commandGroups = {
  tenants: { create: createTenant, createApiKey, listApiKeys, revokeApiKey, updateSettings },
  customers: { create: createCustomer, get: getCustomer, list: listCustomers, update: updateCustomer, delete: deleteCustomer },
  webhookEndpoints: { create: createEndpoint, list: listEndpoints, get: getEndpoint, delete: deleteEndpoint, rotateSecret },
  events: { list: listEvents },
  risk: {
    review: onSql(reviewView),
    createRule: onSql(createRule),
  },
  disputes: { list: onSql(listDisputes) },
  checkout: {
    get: publicGet,
    confirm: publicConfirm,
    config: checkoutConfig,
    checkReturnUrl,
    threeDsReturnUrl,
    complete3ds,
    getSettings: getCheckoutSettings,
    putSettings: putCheckoutSettings,
  },
  links: {
    create: onSql(createLink),
    list: onSql(listLinks),
    get: onSql(getLink),
    demoTenantId: onSql(demoTenantId),
    intentForLink,
    payableIntent,
  },
  fiscalProfile: {
    get: getFiscalProfile,
    /** Stored as of the tenant's clock (its test clock in test mode). */
    put: async (d: FiscalDeps & { log: Logger }, p: Principal, body: FiscalProfileBody) => putFiscalProfile(d, p, body, await nowFor(d.sql, p.tenantId, p.livemode)),
    issuerBySlug,
  },
  statements: { import: importStatement, list: listStatements, get: getStatement, lines: listLines, reconciliation, rematch: rematchStatement },
  reports: { cashCut, savings, feeLeakage, anomalies, payments: paymentsPage, polizas, trialBalance, closePeriod, getAccountMapping, putAccountMapping },
  balance: { get: balance },
  inbound: { simulate: simulateInbound },
  /** The operators' audit log (docs/operator.md): read, export, append, and the `before` of a change. */
  audit: { list: onSql(listAudit), export: onSql(exportAudit), append: onSql(appendAudit), snapshot: onSql(auditSnapshot), payoutApprovalLivemode: onSql(payoutApprovalLivemode) },
  /** The operator console's reads and tenant actions (docs/operator.md). */
  operatorViews: {
    listTenants: onSql(listTenants),
    tenantDetail: onSql(tenantDetail),
    listApplications: onSql(listApplications),
    applicationReview: onSql(applicationReview),
    listRiskReviews: onSql(listRiskReviews),
    listRiskRules: onSql(listRiskRules),
    deactivateRiskRule: onSql(deactivateRiskRule),
    listApprovals: onSql(listApprovals),
    listConnectAccounts: onSql(listConnectAccounts),
    /** Suspension and release announce the tenant's keys to every process (api/auth.ts KeyStore). */
    suspendTenant: (d: { sql: Sql; keys: Announcer }, by: AuditActor, tenantId: string, reason: string | undefined, requestId: string) =>
      suspendTenant({ sql: d.sql, announce: (ids, s) => d.keys.announceSuspension(ids, s) }, by, tenantId, reason, requestId),
    releaseTenant: (d: { sql: Sql; keys: Announcer }, by: AuditActor, tenantId: string, reason: string | undefined, requestId: string) =>
      releaseTenant({ sql: d.sql, announce: (ids, s) => d.keys.announceSuspension(ids, s) }, by, tenantId, reason, requestId),
  },
  /** One payment's, refund's, payout's or invoice's steps with their traces and job history (docs/operator.md). */
  inspect: {
    get: (d: { sql: Sql; jobHistory?: JobHistory; config: { traceUrlTemplate?: string } }, tenantId: string, kind: InspectKind, id: string) =>
      inspect({ sql: d.sql, jobHistory: d.jobHistory, traceUrlTemplate: d.config.traceUrlTemplate }, tenantId, kind, id),
  },
};

interface Announcer {
  announceSuspension(keyIds: readonly string[], suspended: boolean): Promise<void>;
}
