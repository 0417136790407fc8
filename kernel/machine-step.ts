// One step of a pure XState machine, remembered. The machines are pure: one (state, context, event)
// always gives the same next state and effects, so each step is computed once per process
// (xstate's transition() was 5-9% of the worker's CPU in bench/confirm's profile). Only the next
// state's value and the effects' type and params are kept.
import { transition, type AnyStateMachine } from 'xstate';

export interface Effect {
  type: string;
  params?: unknown;
}

export interface Step<E extends Effect = Effect> {
  value: string;
  effects: E[];
}

const CACHE_MAX = 4096;
const caches = new WeakMap<AnyStateMachine, Map<string, Step>>();

/** The next state and the effects (named actions) of `event` in state `value` with `context`. */
export function machineStep<E extends Effect = Effect>(machine: AnyStateMachine, value: string, context: unknown, event: { type: string; [k: string]: unknown }): Step<E> {
  let cache = caches.get(machine);
  if (!cache) caches.set(machine, (cache = new Map()));
  const key = JSON.stringify([value, context ?? null, event]);
  let s = cache.get(key);
  if (!s) {
    const [next, actions] = transition(machine, machine.resolveState({ value, context: context as never }), event as never);
    s = {
      value: next.value as string,
      effects: (actions as Array<{ type: string; params?: unknown }>).map((a) => ({ type: a.type, ...(a.params === undefined ? {} : { params: a.params }) })),
    };
    if (cache.size < CACHE_MAX) cache.set(key, s);
  }
  return s as Step<E>;
}

/** The state values of a machine (its top-level states), for checking them against schemas and SQL. */
export function machineStates(machine: AnyStateMachine): string[] {
  return Object.keys(machine.config.states ?? {});
}

/** The initial state of a machine (a new entity's status). */
export function initialState(machine: AnyStateMachine): string {
  return String(machine.config.initial);
}
