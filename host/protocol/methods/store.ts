/** Quotas, stats, gc and the audit trail (the contract: ../methods.ts). */
import { z } from 'zod';
import { AuditEntry } from '../changes';
import { QuotaKey, QuotaStatus } from '../vault';
import { VaultRef, define } from './define';

export const GcResult = z.object({ chunks_total: z.number(), orphans_found: z.number(), orphans_deleted: z.number(), bytes_freed: z.number(), dry_run: z.boolean() });

export const STORE_METHODS = {
  'quota/get': define(VaultRef, QuotaStatus, 'quotas and usage'),
  'quota/set': define(VaultRef.extend({ key: QuotaKey, value: z.number().int().min(0) }), z.object({ action: z.literal('set'), key: QuotaKey, value: z.number() }), 'set a quota'),
  'quota/clear': define(VaultRef.extend({ key: QuotaKey }), z.object({ action: z.literal('clear'), key: QuotaKey }), 'remove a quota'),
  'vault/stats': define(
    VaultRef,
    z.object({
      files: z.number(),
      directories: z.number(),
      symlinks: z.number(),
      total_size_bytes: z.number(),
      content_chunks: z.number(),
      stored_bytes: z.number(),
      checkpoints: z.number(),
      journal_entries: z.number(),
      size_on_disk: z.number(),
    }),
    'what the vault holds',
  ),
  'vault/gc': define(
    VaultRef.extend({ dry_run: z.boolean().default(false) }),
    GcResult,
    'delete chunks nothing references (forks included) and give the space back',
  ),
  'audit/list': define(
    VaultRef.extend({ limit: z.number().int().min(0).default(50), since_ms: z.number().default(0) }),
    z.object({ entries: z.array(AuditEntry), total_count: z.number() }),
    'the audit trail, newest first',
  ),
} as const;
