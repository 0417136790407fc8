// Crash safety of the money path: intents are confirmed while worker processes are killed with
// SIGKILL mid-run, several times. Afterwards every intent is terminal, no attempt was charged
// twice at the sim provider (its own book of calls by key), and no outbox event is lost or
// duplicated.
import t from 'tap';
import { redisModes } from './helpers/app.js';
import { workersKilledMidRun } from './helpers/crash-scenario.js';

// Service processes boot here: more than tap's default 120 s on a loaded machine.
t.setTimeout(300_000);

t.test('SIGKILL of workers mid-run loses nothing and charges nothing twice (single Redis)', (t) => workersKilledMidRun(t, redisModes[0].env));
