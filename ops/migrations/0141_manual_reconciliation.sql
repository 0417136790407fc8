-- Reconciliation by hand from the portal (issue 29; actors/portal-reconcile.ts): a line matched by an
-- accountant says so.
alter table bank_statement_lines drop constraint if exists bank_statement_lines_matched_by_check;
alter table bank_statement_lines add constraint bank_statement_lines_matched_by_check
  check (matched_by in ('import', 'charge_succeeded', 'rematch', 'manual'));
