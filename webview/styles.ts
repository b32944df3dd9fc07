/** The executions view's styles: the editor theme's variables only, so it looks right in every theme. */
export const STYLES = `
body { padding: 0; color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
#avfs-executions { display: flex; gap: 12px; height: 100vh; box-sizing: border-box; padding: 4px 8px; }
.list { flex: 0 0 46%; overflow: auto; border-right: 1px solid var(--vscode-panel-border, transparent); padding-right: 8px; }
.detail { flex: 1 1 auto; overflow: auto; min-width: 0; }
.empty, .muted { color: var(--vscode-descriptionForeground); }
table.runs { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.runs th { text-align: left; font-weight: normal; color: var(--vscode-descriptionForeground); padding: 2px 6px; position: sticky; top: 0; background: var(--vscode-panel-background, var(--vscode-editor-background)); }
table.runs th:nth-child(1) { width: 34%; }
table.runs th:nth-child(2) { width: 16%; }
table.runs th:nth-child(3) { width: 16%; }
table.runs th:nth-child(4) { width: 16%; }
table.runs th:nth-child(5) { width: 6%; }
table.runs th:nth-child(6) { width: 12%; }
table.runs td { padding: 2px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
table.runs tr.run { cursor: pointer; }
table.runs tr.run:hover { background: var(--vscode-list-hoverBackground); }
table.runs tr.run.selected { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
table.runs tr.run:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
td.command { font-family: var(--vscode-editor-font-family); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.decision, .state { padding: 0 4px; border-radius: 3px; font-size: 0.9em; }
.decision.allow, .state.ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.decision.allow_with_checkpoint { color: var(--vscode-charts-blue); }
.decision.require_approval, .state.running, .state.nonzero { color: var(--vscode-editorWarning-foreground); }
.decision.deny, .state.denied, .state.failed, .state.timed_out, .state.cancelled, .state.lost { color: var(--vscode-errorForeground); }
h2.title { font-size: 1.1em; margin: 4px 0; font-weight: 600; }
h2.title code, li code { font-family: var(--vscode-editor-font-family); }
h3 { font-size: 1em; margin: 8px 0 2px; font-weight: 600; }
.facts { margin: 2px 0 6px; }
.actions { display: flex; gap: 8px; margin: 6px 0; flex-wrap: wrap; }
.note { color: var(--vscode-descriptionForeground); margin: 2px 0 6px; }
.error { color: var(--vscode-errorForeground); }
pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); background: var(--vscode-textCodeBlock-background); padding: 6px 8px; margin: 2px 0 8px; overflow: auto; max-height: 40vh; white-space: pre-wrap; word-break: break-all; }
pre.stderr { color: var(--vscode-errorForeground); }
pre.patch { white-space: pre; max-height: none; }
.line.add { color: var(--vscode-gitDecoration-addedResourceForeground, var(--vscode-charts-green)); background: var(--vscode-diffEditor-insertedLineBackground); }
.line.del { color: var(--vscode-gitDecoration-deletedResourceForeground, var(--vscode-charts-red)); background: var(--vscode-diffEditor-removedLineBackground); }
.line.hunk { color: var(--vscode-descriptionForeground); }
.line { display: inline-block; min-width: 100%; }
vscode-collapsible { margin-bottom: 4px; }
vscode-collapsible pre.patch { margin: 0; }
`;
