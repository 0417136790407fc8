// Where the project's files are at run time, whether running from dist/ (compiled) or the source tree.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'ops', 'migrations'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the project root above ${start}`);
    dir = up;
  }
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
/** The browser kit's and the pages' static files (served by assetRoute in api/routes/common.ts). */
export const webDir = join(projectRoot, 'web');
