// Where the process's own files are: migrations and the state directory (the project root is found in kernel/paths.ts).
import { join, resolve } from 'node:path';
import { projectRoot } from '../kernel/paths.js';

export { projectRoot };
export const migrationsDir = join(projectRoot, 'ops', 'migrations');
export const resolveState = (stateDir: string) => resolve(projectRoot, stateDir);
