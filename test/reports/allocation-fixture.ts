/**
 * One day of the demo company's GPU instances at the demo's list prices (src/simulator/catalog.ts:
 * Frankfurt-1 at 100 % of the catalog, EUR; Manassas-1 at 109 %, USD), for the allocation and
 * GPU-hour tests. Every figure the tests assert is worked out by hand here.
 *
 * The configuration caps a gap at 24 h; one snapshot at 2025-03-01 00:00 UTC, NOW = 2025-03-02
 * 00:00 UTC: every ACTIVE instance runs the whole 24 hours of 2025-03-01.
 *
 * EUR (project 380101, region 38), flavors with their hardware_description.gpu:
 *   g3-ai-24-256-1600-h100-80-1  3.10/h "1x Nvidia H100 80GB"   -> 74.40 a day
 *   g2-ai-12-120-800-a100-80-1   2.45/h "1x Nvidia A100 80GB"   -> 58.80
 *   g3-ai-16-232-1600-l40s-48-1  1.72/h "1x Nvidia L40S 48GB"   -> 41.28
 *   g3-ai-32-464-3200-l40s-48-2  3.44/h "2x Nvidia L40S 48GB"   -> 82.56
 *   x-custom                     1.00/h "see datasheet"         -> 24.00 (GPU count unreadable)
 *   i-ml-1 ml h100-1, i-ml-2 ml a100-1, i-web-1 web l40s-1, i-web-2 web h100-1 SHUTOFF (0),
 *   i-data-1 data l40s-2, i-plat-1 platform l40s-1, i-un-1 (no team) a100-1, i-un-2 (no team) x-custom
 *   Direct spend: ml 133.20, data 82.56, web 41.28, platform 41.28, (untagged) 82.80; total 381.12.
 *
 * USD (project 380103, region 120), prices x 1.09: a100-1 2.6705/h, l40s-1 1.8748/h, h100-1 3.379/h
 *   j-ml-1 ml a100-1 -> 64.092, j-un-1 (no team) l40s-1 -> 44.9952, j-web-1 web h100-1 -> 81.096
 *   Total 190.1832 -> 190.18. In cents by largest remainder: cut down 64.09 + 44.99 + 81.09 = 190.17,
 *   the missing cent to the largest remainder (web, .006): ml 64.09, (untagged) 44.99, web 81.10.
 *   (Rounding each half away from zero would give 64.09 + 45.00 + 81.10 = 190.19: a cent too many.)
 */
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, instancesKept, gpuFlavorsKept } from '../../src/db/schema.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { run, snapshot } from './periods-fixture.js';

export const ALLOCATION_NOW = new Date('2025-03-02T00:00:00Z');
const AT = new Date('2025-03-01T00:00:00Z');

/** Gaps capped at 24 h, plus the given allocation rules. */
export function allocationConfig(allocation: unknown[]): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, allocation }) });
}

const EUR = { scopeKey: '380101-38', projectId: 380101, regionId: 38 };
const USD = { scopeKey: '380103-120', projectId: 380103, regionId: 120 };

const FLAVORS: ReadonlyArray<[string, string, string]> = [
  ['g3-ai-24-256-1600-h100-80-1', '3.10', '1x Nvidia H100 80GB'],
  ['g2-ai-12-120-800-a100-80-1', '2.45', '1x Nvidia A100 80GB'],
  ['g3-ai-16-232-1600-l40s-48-1', '1.72', '1x Nvidia L40S 48GB'],
  ['g3-ai-32-464-3200-l40s-48-2', '3.44', '2x Nvidia L40S 48GB'],
  ['x-custom', '1.00', 'see datasheet'],
];

function vm(scope: typeof EUR, id: string, flavor: string, team: string | null, active = true) {
  return {
    instanceId: id,
    name: id,
    status: active ? 'ACTIVE' : 'SHUTOFF',
    vmState: active ? 'active' : 'stopped',
    flavorId: flavor,
    flavorName: flavor,
    projectId: scope.projectId,
    regionId: scope.regionId,
    region: `region-${scope.regionId}`,
    tags: (team ? { team } : {}) as Record<string, string>,
    raw: { id },
  };
}

export async function seedAllocation(db: Database): Promise<void> {
  const flavorAt = new Date('2025-02-28T23:00:00Z');
  const runF = await run(db, flavorAt);
  for (const [scope, currency, percent] of [[EUR, 'EUR', 100n], [USD, 'USD', 109n]] as const) {
    const id = await snapshot(db, runF, 'flavor', scope, flavorAt);
    await bulkInsert(
      db,
      gpuFlavorsKept,
      FLAVORS.map(([name, price, gpu]) => ({
        snapshotId: id,
        flavorId: name,
        flavorName: name,
        currencyCode: currency,
        // price x percent / 100, exact: 2.45 x 1.09 = 2.6705
        pricePerHour: scaled(price, percent),
        priceStatus: 'show',
        hardware: { cpu: '16 vCPU', gpu },
        projectId: scope.projectId,
        regionId: scope.regionId,
        raw: {},
      })),
    );
  }
  const runId = await run(db, AT);
  const eur = await snapshot(db, runId, 'instance', EUR, AT);
  await bulkInsert(db, instancesKept, [
    { snapshotId: eur, ...vm(EUR, 'i-ml-1', 'g3-ai-24-256-1600-h100-80-1', 'ml') },
    { snapshotId: eur, ...vm(EUR, 'i-ml-2', 'g2-ai-12-120-800-a100-80-1', 'ml') },
    { snapshotId: eur, ...vm(EUR, 'i-web-1', 'g3-ai-16-232-1600-l40s-48-1', 'web') },
    { snapshotId: eur, ...vm(EUR, 'i-web-2', 'g3-ai-24-256-1600-h100-80-1', 'web', false) },
    { snapshotId: eur, ...vm(EUR, 'i-data-1', 'g3-ai-32-464-3200-l40s-48-2', 'data') },
    { snapshotId: eur, ...vm(EUR, 'i-plat-1', 'g3-ai-16-232-1600-l40s-48-1', 'platform') },
    { snapshotId: eur, ...vm(EUR, 'i-un-1', 'g2-ai-12-120-800-a100-80-1', null) },
    { snapshotId: eur, ...vm(EUR, 'i-un-2', 'x-custom', null) },
  ]);
  const usd = await snapshot(db, runId, 'instance', USD, AT);
  await bulkInsert(db, instancesKept, [
    { snapshotId: usd, ...vm(USD, 'j-ml-1', 'g2-ai-12-120-800-a100-80-1', 'ml') },
    { snapshotId: usd, ...vm(USD, 'j-un-1', 'g3-ai-16-232-1600-l40s-48-1', null) },
    { snapshotId: usd, ...vm(USD, 'j-web-1', 'g3-ai-24-256-1600-h100-80-1', 'web') },
  ]);
  await computeCostRollups(db, eur);
  await computeCostRollups(db, usd);
}

/** "2.45" x 109 / 100 as exact decimal text ("2.6705"). */
function scaled(price: string, percent: bigint): string {
  const cents = BigInt(price.replace('.', '')) * percent; // 245 x 109 = 26705 (4 decimals)
  const text = cents.toString().padStart(5, '0');
  return `${text.slice(0, -4)}.${text.slice(-4)}`;
}
