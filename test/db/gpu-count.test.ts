/**
 * The GPU count parser (src/db/gpu-count.ts) in the database, on both engines: the forms of the
 * API spec and of every flavor of the simulator's catalog, and what cannot be read (NULL, never 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { gpuCountSql } from '../../src/db/gpu-count.js';
import { GPU_FLAVORS } from '../../src/simulator/catalog.js';
import { testDatabases } from '../helpers/databases.js';

describe.each(testDatabases())('GPU count of a hardware description on $name', ({ open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open({ migrate: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  async function counts(descriptions: Array<string | null>): Promise<Array<number | null>> {
    const rows = await db.query<{ n: number | null }>(`select ${gpuCountSql('d')} as n from unnest($1::text[]) with ordinality as t(d, i) order by i`, [descriptions]);
    return rows.map((r) => r.n);
  }

  it('reads the count of every flavor of the simulator catalog', async () => {
    // 8x H100, 8x H200, 8x A100, 8x V100 (bare metal); 1x, 2x, 4x L40S, 1x H100, 1x A100 (VMs).
    expect(await counts(GPU_FLAVORS.map((f) => f.hardware.gpu))).toEqual([8, 8, 8, 8, 1, 2, 1, 1, 4]);
  });

  it('reads the forms of the spec and common variants', async () => {
    expect(await counts(['8x A100-80GB', '8 x A100', '2X H100', '4×L40S', ' 16x Nvidia B200 ', 'A100-80GB x 8', 'Nvidia H100 ×2', '0', 'none'])).toEqual([8, 8, 2, 4, 16, 8, 2, 0, 0]);
  });

  it('gives NULL (unknown), never 0, for what it cannot read', async () => {
    expect(await counts(['Nvidia A100 80GB', 'see datasheet', '', null, 'x8', '8x', '0x H100', '2048x H100', '2x100G Ethernet'])).toEqual([
      null, null, null, null, null, null, null, null, null,
    ]);
  });
});
