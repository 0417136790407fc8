// Error codes of terminals (spec: "terminal administration errors (`terminal.*`) belong to the
// portal and are not public /v1 errors") and the one /v1 answer to a charge that names no active
// terminal (decisions.md §7). docs/terminals.md.
import { inv, type ErrorSpec } from './spec.js';

export const TERMINAL_ERRORS = {
  // --- /v1: one answer whatever the reason (unknown, not active, another tenant's or mode's) ---
  'payment_intent.terminal_not_active': inv(
    '`metadata.terminal_id` names no active terminal of this account (unknown, not active, or another account\'s: the same answer). Register and activate the terminal in the portal, or omit `metadata.terminal_id`.',
    '`metadata.terminal_id` does not name an active terminal of this account.',
  ),
  // --- portal / operator (not /v1) ---
  'terminal.not_found': inv('No terminal with this id for this tenant and mode.'),
  'terminal.invalid_serial': inv('`serial` is required: 1 to 64 letters, digits, `-`, `_` or `.`.'),
  'terminal.invalid_branch': inv('`branch` is required (1 to 200 characters) when registering or reassigning a terminal.'),
  'terminal.invalid_register': inv('`register`, when sent, must be 1 to 200 characters.'),
  'terminal.serial_conflict': inv('The tenant already has a terminal with this serial in this mode.'),
  'terminal.concurrent_modification': inv('Another request changed the terminal at the same moment; read it again and retry.'),
} as const satisfies Record<string, ErrorSpec>;
