/** `budgets` in the configuration file: the shape of issue 14, validated with every problem named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config/index.js';

function load(file: Record<string, unknown>): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: '/etc/cloudtally.json' }, { readFile: () => JSON.stringify(file) });
}

function problems(file: Record<string, unknown>): string[] {
  try {
    load(file);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('the configuration was accepted');
}

describe('budgets in the configuration', () => {
  it('reads the issue\'s example, with defaults and exact amounts', () => {
    const config = load({
      budgets: [
        { name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '50000', thresholds: [50, 80, 100], notify: ['finance-hook', 'finance-mail'] },
        { name: 'Everything in USD', currency: 'USD', amount_per_month: '200000', notify: ['finance-mail'] },
      ],
    });
    expect(config.budgets).toEqual([
      { name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', period: 'month', amount: '50000', thresholds: [50, 80, 100], notify: ['finance-hook', 'finance-mail'] },
      { name: 'Everything in USD', by: null, value: null, currency: 'USD', period: 'month', amount: '200000', thresholds: [50, 80, 100], notify: ['finance-mail'] },
    ]);
  });

  it('is null without budgets (the demo then ships its own) and [] when the file says so', () => {
    expect(load({}).budgets).toBeNull();
    expect(load({ budgets: [] }).budgets).toEqual([]);
  });

  it('normalises: currency upper case, amount without padding, thresholds in order, tag key and value by the tag rules', () => {
    const [b] = load({
      tag_aliases: { Équipe: 'team' },
      tag_value_aliases: { team: { ML: 'ml' } },
      budgets: [{ name: 'ML', by: 'tag:Équipe', value: 'ML', currency: 'eur', amount_per_month: '0050000.500', thresholds: [100, 75] }],
    }).budgets!;
    expect(b).toMatchObject({ by: 'tag:team', value: 'ml', currency: 'EUR', period: 'month', amount: '50000.5', thresholds: [75, 100] });
    const others = load({ budgets: ['project', 'region', 'kind', 'flavor'].map((by, i) => ({ name: `b${i}`, by, value: 'x', currency: 'USD', amount_per_month: '1' })) }).budgets!;
    expect(others.map((o) => o.by)).toEqual(['project', 'region', 'kind', 'flavor']);
  });

  it('names every problem', () => {
    expect(
      problems({
        budgets: [
          { name: 'A', by: 'team', value: 'ml', currency: 'EURO', amount_per_month: 50000 },
          { name: 'B', currency: 'EUR', amount_per_month: '0' },
          { name: 'C', currency: 'EUR', amount_per_month: '-5', thresholds: [] },
          { name: 'D', by: 'project', currency: 'EUR', amount_per_month: '1', thresholds: [50, 50, 0] },
          { name: 'E', value: 'ml', currency: 'EUR', amount_per_month: '1.5e3', notify: ['x', 'x'] },
          { name: 'a', currency: 'EUR', amount_per_month: '1', colour: 'red' },
          { currency: 'EUR', amount_per_month: '1' },
        ],
      }),
    ).toEqual([
      'budgets[0].by: must be one of project, region, kind, flavor or tag:<key> (leave it out for the total)',
      'budgets[0].currency: must be an ISO 4217 currency code of 3 letters, e.g. EUR',
      'budgets[0].amount_per_month: must be a decimal number in a string, e.g. "50000" or "1234.50" (exact, never a float)',
      'budgets[1].amount_per_month: must be greater than 0',
      'budgets[2].amount_per_month: must be a decimal number such as 50000 or 1234.50 (at most 15 digits before the point and 6 after)',
      'budgets[2].thresholds: must name at least one percentage',
      'budgets[3].thresholds[2]: must be from 1 to 1000 (percent)',
      'budgets[3].thresholds: must not repeat a percentage',
      'budgets[3].value: is required with by (the group of project the budget covers)',
      'budgets[4].amount_per_month: must be a decimal number such as 50000 or 1234.50 (at most 15 digits before the point and 6 after)',
      'budgets[4].notify: must not repeat a channel',
      'budgets[4].by: is required with value (e.g. "tag:team"); leave both out for the total',
      'budgets[5].colour: is not a known setting',
      'budgets[6].name: Invalid input: expected string, received undefined',
    ]);
  });

  it('refuses two budgets of the same name, whatever the case', () => {
    expect(problems({ budgets: [{ name: 'ML', currency: 'EUR', amount_per_month: '1' }, { name: 'ml', currency: 'EUR', amount_per_month: '2' }] })).toEqual([
      'budgets[1].name: repeats budgets[0] (budget names are compared case-insensitively)',
    ]);
  });
});
