/**
 * Command-line options of a benchmark (node:util parseArgs): each option is named by its default's
 * key (`hourlyDays` is `--hourly-days`), and the default's type says what it takes: a number, a
 * positive integer; a boolean, a flag; a string or null, a value.
 */
import { parseArgs } from 'node:util';

type Defaults = Record<string, number | boolean | string | null>;
type Parsed<D extends Defaults> = { -readonly [K in keyof D]: D[K] extends number ? number : D[K] extends boolean ? boolean : D[K] extends string ? string : string | null };

const flagOf = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function parseBenchOptions<D extends Defaults>(bench: string, args: string[], defaults: D): Parsed<D> {
  const keys = Object.keys(defaults);
  const known = keys.map((k) => `--${flagOf(k)}${typeof defaults[k] === 'boolean' ? '' : ' N'}`).join(', ');
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      strict: true,
      options: Object.fromEntries(keys.map((k) => [flagOf(k), { type: typeof defaults[k] === 'boolean' ? ('boolean' as const) : ('string' as const) }])),
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new Error(`bench ${bench}: ${error instanceof Error ? error.message : String(error)} (known: ${known})`);
  }
  const parsed: Record<string, unknown> = { ...defaults };
  for (const key of keys) {
    const given = values[flagOf(key)];
    if (given === undefined) continue;
    if (typeof defaults[key] === 'number') {
      const n = Number(given);
      if (!Number.isInteger(n) || n < 1) throw new Error(`bench ${bench}: --${flagOf(key)} must be a positive integer`);
      parsed[key] = n;
    } else {
      parsed[key] = given;
    }
  }
  return parsed as Parsed<D>;
}

/** The local Postgres the benchmarks create their databases on. */
export const BENCH_SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
