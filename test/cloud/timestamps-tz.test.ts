import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const primitives = fileURLToPath(new URL('../../src/cloud/schemas/primitives.ts', import.meta.url));

const SAMPLES: Array<[string, string]> = [
  ['2023-09-28 15:25:06.115000', '2023-09-28T15:25:06.115Z'],
  ['2019-06-25T08:42:42', '2019-06-25T08:42:42.000Z'],
  ['2023-09-28T15:24:34+0000', '2023-09-28T15:24:34.000Z'],
  ['2023-09-28T15:24:34Z', '2023-09-28T15:24:34.000Z'],
];

/** Runs parseApiTimestamp in a fresh Node process with the given TZ. */
async function parseUnder(tz: string): Promise<{ parsed: string[]; offsetMinutes: number }> {
  const script = `
    import { parseApiTimestamp } from ${JSON.stringify(primitives)};
    const inputs = ${JSON.stringify(SAMPLES.map(([text]) => text))};
    console.log(JSON.stringify({
      parsed: inputs.map((t) => parseApiTimestamp(t).toISOString()),
      offsetMinutes: new Date('2023-09-28T12:00:00Z').getTimezoneOffset(),
    }));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, TZ: tz },
  });
  return JSON.parse(stdout) as { parsed: string[]; offsetMinutes: number };
}

describe('zone-less timestamps are UTC whatever the machine time zone', () => {
  it.each([
    ['America/Los_Angeles', 420],
    ['Asia/Kolkata', -330],
  ])('under TZ=%s', async (tz, expectedOffset) => {
    const { parsed, offsetMinutes } = await parseUnder(tz);
    expect(offsetMinutes).toBe(expectedOffset); // the child really ran in that zone
    expect(parsed).toEqual(SAMPLES.map(([, utc]) => utc));
  });
});
