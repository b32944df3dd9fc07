/** What the method tables of every area share: how a method is defined, and the params most take. */
import { z } from 'zod';

export const define = <P extends z.ZodType, R extends z.ZodType>(params: P, result: R, doc: string) => ({ params, result, doc });

export const VaultRef = z.object({ vault: z.string().optional() });
export const PathRef = VaultRef.extend({ path: z.string() });
export const Base64 = z.string().describe('bytes, base64-encoded');
export const Mode = z.number().int().min(0).max(0o7777);
/** A quota as a caller sets it: a whole number, or null for none. */
export const QuotaValues = z.object({
  max_size_mb: z.number().int().min(0).nullable(),
  max_files: z.number().int().min(0).nullable(),
  max_file_size_mb: z.number().int().min(0).nullable(),
});
/** A path on the host's own file system: absolute, or relative to host_cwd (the caller's working directory). */
export const HostPath = {
  host_path: z.string().min(1),
  host_cwd: z.string().optional().describe('absolute; what a relative host_path is taken from (the CLI sends its own cwd)'),
};

