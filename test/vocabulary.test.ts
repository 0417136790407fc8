// Status vocabularies are defined once, by the machines: the schema enum of each resource (what
// OpenAPI promises) and the SQL CHECK of its status column (what the database accepts) must list
// exactly the machine's states. A new stateful resource adds a line to RESOURCES.
import t from 'tap';
import type { AnyStateMachine } from 'xstate';
import { createSql } from '../kernel/db.js';
import { machineStates } from '../kernel/machine-step.js';
import { migrate } from '../ops/migrate.js';
import { attemptMachine } from '../machines/attempt.js';
import { paymentIntentMachine } from '../machines/payment-intent.js';
import { paymentMethodMachine } from '../machines/payment-method.js';
import { refundMachine } from '../machines/refund.js';
import { invoiceMachine } from '../machines/invoice.js';
import { creditNoteResource, invoicePaymentResource, invoiceResource } from '../schemas/invoices.js';
import { cfdiDocumentMachine } from '../machines/cfdi-document.js';
import { attemptResource, paymentIntentResource } from '../schemas/payment-intents.js';
import { paymentMethodResource, refundResource } from '../schemas/refunds.js';
import { testConfig } from './helpers/app.js';
import { onboardingMachine } from '../machines/onboarding-application.js';
import { payoutMachine } from '../machines/payout.js';
import { connectAccountMachine } from '../machines/connect-account.js';
import { accountResource, applicationResource, payoutResource } from '../schemas/connect.js';
import { servicePaymentMachine } from '../machines/service-payment.js';
import { rechargeMachine } from '../machines/recharge.js';
import { rechargeResource, servicePaymentResource } from '../schemas/billers.js';
import { receivableMachine } from '../machines/receivable.js';
import { receivableResource } from '../schemas/receivables.js';
import { terminalMachine } from '../machines/terminal.js';
import { terminalResource } from '../schemas/terminals.js';
import { approvalMachine } from '../machines/approval.js';
import { refundApprovalResource } from '../schemas/refunds.js';
import { payoutApprovalResource } from '../schemas/connect.js';

interface Resource {
  name: string;
  machine: AnyStateMachine;
  schema: { properties: { status: { enum: readonly string[] } } };
  table: string;
}

const RESOURCES: Resource[] = [
  { name: 'payment_intent', machine: paymentIntentMachine, schema: paymentIntentResource as never, table: 'payment_intents' },
  { name: 'attempt', machine: attemptMachine, schema: attemptResource as never, table: 'attempts' },
  { name: 'refund', machine: refundMachine, schema: refundResource as never, table: 'refunds' },
  // One approval entity kind (table approvals) answered as refund_approval or payout_approval.
  { name: 'approval (refund)', machine: approvalMachine, schema: refundApprovalResource as never, table: 'approvals' },
  { name: 'approval (payout)', machine: approvalMachine, schema: payoutApprovalResource as never, table: 'approvals' },
  { name: 'payment_method', machine: paymentMethodMachine, schema: paymentMethodResource as never, table: 'payment_methods' },
  { name: 'onboarding_application', machine: onboardingMachine, schema: applicationResource as never, table: 'onboarding_applications' },
  { name: 'payout', machine: payoutMachine, schema: payoutResource as never, table: 'payouts' },
  { name: 'connect_account', machine: connectAccountMachine, schema: accountResource as never, table: 'connect_accounts' },
  { name: 'invoice', machine: invoiceMachine, schema: invoiceResource as never, table: 'invoices' },
  { name: 'invoice_payment', machine: cfdiDocumentMachine, schema: invoicePaymentResource as never, table: 'invoice_payments' },
  { name: 'credit_note', machine: cfdiDocumentMachine, schema: creditNoteResource as never, table: 'credit_notes' },
  { name: 'service_payment', machine: servicePaymentMachine, schema: servicePaymentResource as never, table: 'service_payments' },
  { name: 'recharge', machine: rechargeMachine, schema: rechargeResource as never, table: 'recharges' },
  { name: 'receivable', machine: receivableMachine, schema: receivableResource as never, table: 'receivables' },
  { name: 'terminal', machine: terminalMachine, schema: terminalResource as never, table: 'terminals' },
];

/** The values a `status in (…)` check constraint accepts. */
function checkValues(def: string): string[] {
  return [...def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
}

t.test('machine states = schema enum = SQL check, for every stateful resource', async (t) => {
  const sql = createSql(testConfig().databaseUrl, 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  for (const r of RESOURCES) {
    const states = machineStates(r.machine).sort();
    t.ok(states.length > 1, `${r.name}: ${states.length} states`);
    t.same([...r.schema.properties.status.enum].sort(), states, `${r.name}: the OpenAPI enum lists the machine's states`);
    const rows = await sql`
      select pg_get_constraintdef(c.oid) as def from pg_constraint c join pg_class k on k.oid = c.conrelid
       where k.relname = ${r.table} and c.contype = 'c' and pg_get_constraintdef(c.oid) like '%status%'`;
    t.equal(rows.length, 1, `${r.table}: one check on status`);
    t.same(checkValues(String(rows[0]?.def ?? '')).sort(), states, `${r.table}.status accepts exactly the machine's states`);
  }
});

t.test('the parser of check constraints reads what Postgres prints', async (t) => {
  t.same(checkValues("CHECK ((status = ANY (ARRAY['a'::text, 'b_c'::text])))"), ['a', 'b_c']);
});
