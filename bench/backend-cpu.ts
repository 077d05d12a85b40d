/**
 * CPU seconds of one process (Linux /proc), and of the Postgres backends serving one database:
 * a benchmark counts its own backends, not every database on a shared server.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';

const CLOCK_TICKS = 100;

/** User and system CPU seconds of one process (all its threads), or null when they cannot be read (gone, or not on this machine). */
export function cpuSplitOf(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return null;
  }
}

/** User + system CPU seconds of one process, or null when they cannot be read. */
export function cpuSecondsOf(pid: number): number | null {
  const split = cpuSplitOf(pid);
  return split === null ? null : split.user + split.system;
}

/** How often the list of backends is refreshed: a backend that ends between two refreshes loses at most this much of its CPU. */
const REFRESH_MS = 200;

/**
 * The client backends of database `dbName` (pg_stat_activity, asked over the server's maintenance
 * database so the asking session is not one of them), found at start() and every 200 ms after.
 * seconds() is their CPU since start(): a backend already there counts from its CPU at start(),
 * one that appears later from 0 (it started during the measurement).
 */
export class DatabaseBackendsCpu {
  private readonly base = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly serverUrl: string,
    private readonly dbName: string,
  ) {}

  async start(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.serverUrl, application_name: 'ct_bench_cpu_sampler' });
    await this.client.connect();
    await this.refresh(true);
    this.timer = setInterval(() => {
      this.refreshing ??= this.refresh(false).finally(() => (this.refreshing = null));
    }, REFRESH_MS);
  }

  /** CPU seconds of the database's backends since start(), their current readings included. */
  seconds(): number {
    let total = 0;
    for (const [pid, base] of this.base) {
      const now = cpuSecondsOf(pid);
      if (now !== null) this.last.set(pid, now);
      total += (this.last.get(pid) ?? base) - base;
    }
    return total;
  }

  /** The backends' CPU since start(); stops sampling. */
  async stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    await this.refreshing;
    await this.refresh(false);
    const total = this.seconds();
    await this.client?.end();
    this.client = null;
    return total;
  }

  private async refresh(atStart: boolean): Promise<void> {
    if (!this.client) return;
    const { rows } = await this.client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
      [this.dbName],
    );
    for (const { pid } of rows) {
      if (this.base.has(pid)) continue;
      const now = cpuSecondsOf(pid);
      if (now === null) continue; // ended already, or Postgres runs on another machine
      this.base.set(pid, atStart ? now : 0);
      this.last.set(pid, now);
    }
    this.seconds(); // keeps the last reading of every backend known, before any of them ends
  }
}
