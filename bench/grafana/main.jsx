// Grafana's flame graph (@grafana/flamegraph, the component Grafana's flame-graph panel uses),
// mounted on a bare page for the benchmark. The harness drives it through window.bench:
//   bench.ready            resolves once the component is mounted (on a 2-node dummy profile)
//   bench.load(url)        fetches a generated grafana.json, parses it, builds the DataFrame and
//                          hands it to <FlameGraph> — the timed path ("bytes in the page" is the
//                          moment fetch's body is complete, recorded by the harness' fetch hook)
// Query parameters:
//   ?view=graph      the panel showing only its flame graph (the header's "Flame Graph" view: no
//                    top table; search, focus and reset still work), as a dashboard panel sized
//                    for the graph shows it; without it, Grafana's default "Both" (table + graph)
//   &load=<url>      loads that profile at boot instead of the dummy (the first-view case: from
//                    navigation to the painted graph, boot included)
import React, { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
// Grafana's packages are loaded through their CommonJS builds: their ESM builds (.mjs) default-import
// CommonJS modules (e.g. react-custom-scrollbars-2), which a bundler must then treat with Node's
// interop and which breaks at run time; the CommonJS builds do their own interop.
const { FlameGraph } = require('@grafana/flamegraph');
const { createDataFrame, createTheme, FieldType } = require('@grafana/data');

const theme = createTheme({ colors: { mode: 'light' } });
const getTheme = () => theme;

/** grafana.json (columns written by embers-bench-gen) → the nested-set DataFrame. */
function toDataFrame(cols) {
  return createDataFrame({
    name: 'profile',
    meta: { preferredVisualisationType: 'flamegraph' },
    fields: [
      { name: 'level', type: FieldType.number, values: cols.level },
      { name: 'value', type: FieldType.number, values: cols.value, config: { unit: 'µs' } },
      { name: 'self', type: FieldType.number, values: cols.self, config: { unit: 'µs' } },
      // Labels as an enum field (indices into the names), as Grafana's Pyroscope data source sends them.
      { name: 'label', type: FieldType.enum, values: cols.label, config: { type: { enum: { text: cols.names } } } },
    ],
  });
}

const DUMMY = { names: ['total', 'warmup'], level: [0, 1], value: [2, 1], self: [1, 1], label: [0, 1] };
const params = new URLSearchParams(location.search);
const graphOnly = params.get('view') === 'graph';
const bootUrl = params.get('load');

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));

/** Picks the header's "Flame Graph" view (as a user of the panel would) and waits until the top
 *  table is gone. */
async function showGraphOnly() {
  for (let i = 0; i < 600; i++) {
    const label = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === 'Flame Graph');
    if (label) {
      label.click();
      break;
    }
    await nextFrame();
  }
  for (let i = 0; i < 600 && document.querySelector('[data-testid=topTable]'); i++) await nextFrame();
  if (document.querySelector('[data-testid=topTable]')) throw new Error('the top table did not go away');
}

let setFrame;
let resolveReady;
const ready = new Promise((r) => { resolveReady = r; });

function App() {
  const [frame, set] = useState(() => toDataFrame(DUMMY));
  setFrame = set;
  useEffect(() => {
    (graphOnly ? showGraphOnly() : Promise.resolve()).then(resolveReady, (e) => window.__bench?.errors.push(String(e)));
  }, []);
  return (
    <div style={{ width: '100%' }}>
      <FlameGraph data={frame} getTheme={getTheme} showAnalyzeWithAssistant={false} />
    </div>
  );
}

window.bench = {
  ready,
  async load(url) {
    const res = await fetch(url);
    const cols = JSON.parse(await res.text());
    window.bench.nodes = cols.level.length;
    setFrame(toDataFrame(cols));
  },
};

createRoot(document.getElementById('root')).render(<App />);
if (bootUrl) ready.then(() => window.bench.load(bootUrl));
