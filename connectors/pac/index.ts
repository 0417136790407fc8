// Which PAC stamps for a fiscal profile: `sim` in test mode, `finkok` in live mode; never across.
import { FINKOK_HOSTS } from './finkok-mapping.js';
import { FinkokPac } from './finkok.js';
import type { Pac } from './pac.js';
import { SimPac } from './sim.js';

export const PAC_PROVIDERS = ['sim', 'finkok'] as const;
export type PacProvider = (typeof PAC_PROVIDERS)[number];

/** The environment of each provider: the sim is test mode only, real PACs live only. */
export const PAC_IS_LIVE: Record<PacProvider, boolean> = { sim: false, finkok: true };

export class PacRegistry {
  private readonly sim = new SimPac();
  private finkok?: FinkokPac;

  constructor(private readonly opts: { finkokUrl?: string; finkokDemoUrl?: string; finkokTimeoutMs?: number } = {}) {}

  /** The PAC for a provider key; callers check PAC_IS_LIVE against the mode first. */
  get(provider: PacProvider): Pac {
    if (provider === 'sim') return this.sim;
    return (this.finkok ??= new FinkokPac({ baseUrl: this.opts.finkokUrl ?? FINKOK_HOSTS.production, demoUrl: this.opts.finkokDemoUrl ?? FINKOK_HOSTS.demo, timeoutMs: this.opts.finkokTimeoutMs }));
  }
}
