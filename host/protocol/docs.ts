/** The reference docs that are generated from the contract (never written by hand). */
import { z } from 'zod';
import { AuditEntry, ChangeSummary, CheckpointInfo, RestoreResult } from './changes';
import { ERROR_TABLE, ErrorJson } from './errors';
import { ExecRequest, ExecutionEnvelope } from './exec';
import { CliHelp } from './help';
import { Decision, PolicyRuleFile, PolicyRulesReport } from './policy';
import { HostRecord, MountRecord } from './records';
import { QuotaStatus, Stat, VaultInfo, VaultSummary } from './vault';

const SCHEMAS: Record<string, z.ZodType> = {
  error: ErrorJson,
  stat: Stat,
  'vault-summary': VaultSummary,
  'vault-info': VaultInfo,
  'quota-status': QuotaStatus,
  'checkpoint-info': CheckpointInfo,
  'change-summary': ChangeSummary,
  'restore-result': RestoreResult,
  'audit-entry': AuditEntry,
  'execution-envelope': ExecutionEnvelope,
  'cli-help': CliHelp,
  'policy-decision': Decision,
  'policy-rule-file': PolicyRuleFile,
  'policy-rules-report': PolicyRulesReport,
  'host-record': HostRecord,
  'mount-record': MountRecord,
};

const REQUEST_SCHEMAS: Record<string, z.ZodType> = {
  'exec-request': ExecRequest,
};

function errorsMarkdown(): string {
  const rows = Object.entries(ERROR_TABLE).map(
    ([kind, e]) => `| \`${kind}\` | ${e.exit} | \`${e.errno}\` | ${e.rpc} | ${e.vscode === null ? '–' : `\`${e.vscode}\``} | ${e.doc} |`,
  );
  return `# Errors

<!-- generated from host/protocol/errors.ts by \`npm run docs\`; do not edit -->

Every failure on every surface is one typed error. With \`--json\` the CLI prints it as exactly one
JSON document on stdout, \`{ "error": Kind, "message": "…", …details }\`, and exits with the code
below; without \`--json\` it prints \`avfs: Kind: message\` on stderr. FUSE answers the errno. The
vault host answers a JSON-RPC error with the code below (outside the range JSON-RPC reserves,
-32768..-32000) and the same document as its \`data\`; the VS Code extension's file systems throw
the \`vscode.FileSystemError\` named below (–: none fits; the editor shows the message).
Details carry what an agent needs to branch: \`path\` for file errors, \`vault\` for vault errors,
\`quota\`, \`limit\`, \`current\`, \`requested\` and \`unit\` for \`QuotaExceeded\`.

| error | exit code | errno | JSON-RPC code | VS Code | meaning |
|---|---|---|---|---|---|
${rows.join('\n')}

Exit code 0 is success, and every kind has its own code, so a script can branch on the status
alone. Usage errors (unknown command or option, bad number) are \`InvalidInput\`. When the reader of
standard output goes away early (\`avfs cat /big | head -c 10\`), avfs ends quietly the way coreutils
do, killed by \`SIGPIPE\` (a shell reports 141).
`;
}

export function generatedDocs(): Record<string, string> {
  const out: Record<string, string> = { 'docs/errors.md': errorsMarkdown() };
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    out[`docs/schema/${name}.schema.json`] = JSON.stringify(z.toJSONSchema(schema, { io: 'output' }), null, 2) + '\n';
  }
  // Requests are described as a caller writes them: fields with defaults may be left out.
  for (const [name, schema] of Object.entries(REQUEST_SCHEMAS)) {
    out[`docs/schema/${name}.schema.json`] = JSON.stringify(z.toJSONSchema(schema, { io: 'input' }), null, 2) + '\n';
  }
  return out;
}
