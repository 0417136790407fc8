// Loads uWebSockets.js's native binary directly. The npm package falls back silently to a slow
// JavaScript implementation when its binary does not load; we refuse to boot instead.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

function loadNative(): typeof UWS {
  const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
  const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    return require(file) as typeof UWS;
  } catch (e) {
    throw new Error(
      `uWebSockets.js native binary did not load (${file}): ${(e as Error).message}. ` +
        `Orquesta refuses the slow JavaScript fallback. Use Node 20 (ABI 115) on linux-x64/arm64, ` +
        `and keep "uWebSockets.js": "npm:@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0".`,
    );
  }
}

export const uws = loadNative();
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
