// Killing the delivery worker in the middle of a fan-out loses nothing: every event reaches every
// endpoint at least once afterwards (duplicates are allowed: receivers dedupe on event_id).
import t from 'tap';
import { redisModes } from './helpers/app.js';
import { deliveryWorkerKilledMidFanOut } from './helpers/webhook-crash-scenario.js';

// Service processes boot here: more than tap's default 120 s on a loaded machine.
t.setTimeout(300_000);

t.test('SIGKILL of the delivery worker mid fan-out: every event delivered at least once (single Redis)', (t) => deliveryWorkerKilledMidFanOut(t, redisModes[0].env));
