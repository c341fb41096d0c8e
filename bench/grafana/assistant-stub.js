// @grafana/flamegraph imports OpenAssistantButton from @grafana/assistant (an optional peer
// dependency that needs @grafana/runtime and React 19). The benchmark hides that button
// (showAnalyzeWithAssistant={false}), so a no-op stands in for it.
export const OpenAssistantButton = () => null;
export default {};
