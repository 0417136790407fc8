// Facades over plain functions that take their dependencies first (`fn(deps, ...args)`): bound to
// the process's dependencies once, they become `group.fn(...args)`. ops/ binds the actors' plain
// functions this way (actors/facades.ts) so that the edge calls capabilities and never holds a pool.
import type { Sql } from './db.js';

/** A group of functions with their first parameter (the dependencies) already given. */
export type Bound<G> = { [K in keyof G]: G[K] extends (deps: never, ...args: infer A) => infer R ? (...args: A) => R : never };

/** Binds every function of a group to `deps`. */
export function bind<D, G extends Record<string, (deps: D, ...args: never[]) => unknown>>(deps: D, group: G): Bound<G> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(group)) {
    const fn = group[k] as unknown as (deps: D, ...args: unknown[]) => unknown;
    out[k] = (...args: unknown[]) => fn(deps, ...args);
  }
  return out as Bound<G>;
}

/** Binds every group of a set of groups to `deps`. */
export function bindGroups<D, S extends Record<string, Record<string, (deps: D, ...args: never[]) => unknown>>>(deps: D, groups: S): { [N in keyof S]: Bound<S[N]> } {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(groups)) out[k] = bind(deps, groups[k]);
  return out as { [N in keyof S]: Bound<S[N]> };
}

/** A function written against the primary pool, as a member of a group: `(sql, ...a)` → `({ sql }, ...a)`. */
export const onSql =
  <A extends unknown[], R>(fn: (sql: Sql, ...args: A) => R) =>
  (deps: { sql: Sql }, ...args: A): R =>
    fn(deps.sql, ...args);
