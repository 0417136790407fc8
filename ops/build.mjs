// npm run build: tsc, the SDK generated from the OpenAPI document, tsc again if it changed (ops/launcher.mjs build()).
import { build, ensureInstalled } from './launcher.mjs';

ensureInstalled();
build();
