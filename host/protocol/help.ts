/** The `avfs` command tree as data: what `avfs --json help [command…]` and `--json --help` print. */
import { z } from 'zod';

export const CliHelp = z.object({
  command: z.string().describe('the full command, e.g. "avfs vault create"'),
  usage: z.string(),
  description: z.string(),
  aliases: z.array(z.string()),
  arguments: z.array(z.object({ name: z.string(), required: z.boolean(), variadic: z.boolean(), description: z.string() })),
  options: z.array(z.object({ flags: z.string(), description: z.string(), default: z.unknown().optional() })),
  commands: z.array(z.object({ name: z.string(), aliases: z.array(z.string()), usage: z.string(), description: z.string() })),
  examples: z.array(z.string()),
});
export type CliHelp = z.infer<typeof CliHelp>;
