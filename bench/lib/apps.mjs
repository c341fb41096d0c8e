// The viewers the harness runs, by name. Each driver knows how to open its viewer on a
// generated profile, wait for the first painted frame, and perform zoom / reset / hover / search
// so that lib/instrument.mjs can time them: Embers in lib/embers.mjs, the peers in lib/peers.mjs.

import { embers, embersCompare } from './embers.mjs';
import { grafana, grafanaGraph, speedscope } from './peers.mjs';

export { embersScroll } from './embers.mjs';
export { BROWSER_ARGS, measureMemory, VIEWPORT } from './page.mjs';
export { profileEmbers } from './profile.mjs';

export const APPS = { embers, embersCompare, speedscope, grafana, grafanaGraph };
