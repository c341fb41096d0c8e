// The same query answered in result shape A and shape B draws the same picture.
//
// One server; the first query goes out as the page sends it (the server's default, shape B),
// then page.route rewrites the request body to add "result_shape":"A" and the same form is
// submitted again. Absolute time ranges keep both requests identical otherwise.
//
// One documented difference: shape B's `function_types` can mark a frame `O` (the allocated
// object type at the leaf of a memory profile), which shape A cannot express (see
// model/src/kind.rs), so in shape A those leaves are coloured as application frames. The test
// reads the `O` functions from the shape-B answer and allows exactly those bars to differ in
// colour (and their tooltips in kind); everything else must be identical.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();

const CASES = [
  { name: 'redis-server on-cpu', params: { app_service: 'redis-server' } },
  { name: 'per-host Total', params: { app_service: 'Total' } },
  { name: 'java mem-alloc with a quoted filter', params: { app_service: 'java', profile_event_type: 'mem-alloc', tag_filter: "pod_ns='team-o\\'brien'" }, expectObjects: true },
  { name: 'postgres off-cpu', params: { app_service: 'postgres', profile_event_type: 'off-cpu' } },
];

/** The status line without the parts that may differ between shapes: shape and decode time. */
const comparable = (status) => status.replace(/ · shape [AB]/, '').replace(/ · decoded in \d+ ms$/, '');

test('6. shape A and shape B answers give the same picture', async (t) => {
  for (const c of CASES) {
    await t.test(c.name, async (t) => {
      const v = await openViewer(t, env, { params: null });
      const answeredB = v.page.waitForResponse('**/v1/profile/ProfileTracing');
      await v.goto({ ...c.params, ...demoRange(env.server) });
      const resultB = JSON.parse(await (await answeredB).text()).result;
      const objectNames = new Set(resultB.functions.filter((_, i) => resultB.function_types[i] === 'O'));
      const b = await v.waitForGraph();
      const statusB = await v.status();
      assert.equal(b.shape, 'B', statusB);
      await v.canvasSnapshot('B');
      const barsB = await v.bars();
      const isObject = (bar) => bar.label !== null && objectNames.has(bar.label.replace(/ \([^)]*\)$/, ''));
      const tipBar = await v.findBar(Math.min(2, b.depth));
      const tipB = await v.hoverBar(tipBar);
      const objectBar = barsB.find(isObject);
      assert.equal(Boolean(objectBar), Boolean(c.expectObjects), 'object leaves only in the memory profile');
      const objectTipB = objectBar && (await v.hoverBar(objectBar));
      await v.pointerAway();
      await v.waitForCanvasStable();

      const seen = [];
      await v.page.route('**/v1/profile/ProfileTracing', async (route) => {
        const body = { ...route.request().postDataJSON(), result_shape: 'A' };
        seen.push(body);
        await route.continue({ postData: JSON.stringify(body) });
      });
      const answered = v.page.waitForResponse('**/v1/profile/ProfileTracing');
      await v.query({});
      const raw = await (await answered).text();
      assert.match(raw, /"result":\s*\[/, 'the server answered a node array (shape A)');
      const a = await v.waitForGraph();
      const statusA = await v.status();
      assert.equal(seen.length, 1);
      assert.equal(a.shape, 'A', statusA);
      assert.deepEqual(v.requests[0].body, v.requests[1].body, 'the page sent the same request twice');

      assert.equal(comparable(statusA), comparable(statusB));
      await v.canvasSnapshot('A');
      const barsA = await v.bars();
      const objects = barsB.filter(isObject);
      const sameBut = (bars) => bars.map((bar) => (isObject(bar) ? { ...bar, fill: '(object kind)' } : bar));
      assert.deepEqual(sameBut(barsA), sameBut(barsB), 'the same bars, labels and colours are drawn');
      for (const o of objects) {
        const inA = barsA.find((x) => x.x === o.x && x.y === o.y);
        assert.notEqual(inA.fill, o.fill, `${o.label}: object kind is only known in shape B`);
      }
      const diff = await v.canvasDiff('B', 'A', { exclude: objects });
      assert.equal(diff, 0, `${diff} pixels differ between shape A and shape B`);
      assert.deepEqual(await v.hoverBar(tipBar), tipB);
      if (objectBar) {
        const objectTipA = await v.hoverBar(objectBar);
        assert.match(objectTipB.kind, /^allocated object frame/);
        assert.match(objectTipA.kind, /^application frame/);
        assert.deepEqual({ ...objectTipA, kind: '', text: '' }, { ...objectTipB, kind: '', text: '' });
      }
      v.assertNoErrors();
    });
  }
});
