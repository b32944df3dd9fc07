/** Types of scripts/pgcluster.mjs (a throwaway PostgreSQL cluster for tests and benchmarks). */
export interface Cluster {
  dir: string;
  url: string;
  running: boolean;
  start(): void;
  stop(mode?: 'smart' | 'fast' | 'immediate'): void;
  psql(sql: string, db?: string): string;
  destroy(): void;
}
export function pgBinDir(): string | undefined;
export function startCluster(opts?: { durable?: boolean }): Cluster;
