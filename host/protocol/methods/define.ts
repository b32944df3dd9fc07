/** What the method tables of every area share: how a method is defined, and the params most take. */
import { z } from 'zod';

export const define = <P extends z.ZodType, R extends z.ZodType>(params: P, result: R, doc: string) => ({ params, result, doc });

export const VaultRef = z.object({ vault: z.string().optional() });
export const PathRef = VaultRef.extend({ path: z.string() });
/** Standard base64 only (A–Z a–z 0–9 + /, = padding to a multiple of 4): anything else would be decoded into other bytes than were meant. */
function isBase64(s: string): boolean {
  if (s.length % 4 !== 0) return false;
  const body = s.endsWith('==') ? s.slice(0, -2) : s.endsWith('=') ? s.slice(0, -1) : s;
  return !/[^A-Za-z0-9+/]/.test(body);
}
export const Base64 = z
  .string()
  .refine(isBase64, 'not base64: the standard alphabet (A-Z, a-z, 0-9, +, /) with = padding to a multiple of 4 characters')
  .describe('bytes, base64-encoded');
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

