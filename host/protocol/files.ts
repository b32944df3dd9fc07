/** File results beyond stat and directory entries: a file as text, a tree, import and export totals. */
import { z } from 'zod';
import { FileType } from './vault';

/** A file's bytes as an agent reads them: the text when they are UTF-8, else base64. */
export const FileText = z.object({
  path: z.string(),
  size: z.number(),
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});
export type FileText = z.infer<typeof FileText>;

export interface TreeNode {
  name: string;
  type: FileType;
  size: number;
  target?: string | undefined;
  children?: TreeNode[] | undefined;
}

export const TreeNode: z.ZodType<TreeNode> = z.object({
  name: z.string(),
  type: FileType,
  size: z.number(),
  target: z.string().optional(),
  get children() {
    return z.array(TreeNode).optional().describe('a directory\'s entries, down to the depth asked for');
  },
});

const Skipped = z.object({ path: z.string(), type: z.string(), reason: z.string() });

const TransferTotals = {
  dirs_created: z.number(),
  symlinks: z.number(),
  hardlinks: z.number(),
  special_files: z.number().describe('FIFOs and sockets'),
  total_bytes: z.number(),
};

export const ImportResult = z.object({
  source: z.string().describe('the host path as given'),
  vfs_path: z.string(),
  files_imported: z.number(),
  ...TransferTotals,
  skipped_count: z.number(),
  skipped: z.array(Skipped).describe('entries that cannot live in a vault (devices), not copied'),
});
export type ImportResult = z.infer<typeof ImportResult>;

export const ExportResult = z.object({
  vfs_path: z.string(),
  destination: z.string().describe('the host path as given'),
  files_exported: z.number(),
  ...TransferTotals,
});
export type ExportResult = z.infer<typeof ExportResult>;
