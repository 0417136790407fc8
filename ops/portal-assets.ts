// The portal's built files in dist/web/portal (no CDN, nothing fetched at run time), read once and
// kept in memory. ops/build-web.mjs (esbuild) bundles them from web/portal during every build
// (npm run build, npm start, npm test: ops/launcher.mjs build()); a name that is not there answers
// undefined (a 404).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './paths.js';

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml', '.png': 'image/png', '.map': 'application/json' };

export function portalAssets(dir = join(projectRoot, 'dist', 'web', 'portal')) {
  const cache = new Map<string, { body: Uint8Array; type: string } | undefined>();
  return (name: string) => {
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(name) || name.includes('..')) return undefined;
    if (!cache.has(name)) {
      const p = join(dir, name);
      const ext = name.slice(name.lastIndexOf('.'));
      cache.set(name, existsSync(p) && TYPES[ext] ? { body: readFileSync(p), type: TYPES[ext] } : undefined);
    }
    return cache.get(name);
  };
}
