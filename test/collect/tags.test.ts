import { describe, expect, it } from 'vitest';
import { tagColumns } from '../../src/collect/tags.js';
import { testConfig } from './helpers.js';

describe('tag columns of a resource row', () => {
  const config = testConfig({ tag_aliases: { 'équipe': 'team', 'owner-team': 'team' } });

  it('normalises keys (case, aliases), keeps the first of colliding keys and the list as received', () => {
    const list = [
      { key: 'Team', value: 'ML', read_only: false },
      { key: 'team', value: 'ml', read_only: false },
      { key: 'équipe', value: 'data-eng', read_only: false },
      { key: 'Created-By', value: 'terraform', read_only: true },
      { key: 'billing.code', value: 'BC-4100', read_only: false },
      { key: 'k8s.io/cluster-name', value: 'k8s-a', read_only: false },
    ];
    const columns = tagColumns(list, config);
    expect(columns.tags).toEqual({ team: 'ML', 'created-by': 'terraform', 'billing.code': 'BC-4100', 'k8s.io/cluster-name': 'k8s-a' });
    expect(columns.tagsReadOnly).toEqual(['created-by']);
    expect(columns.tagsOriginal).toEqual(list);
  });

  it('treats odd keys as plain keys and a missing value as empty', () => {
    const columns = tagColumns(
      [
        { key: '__proto__', value: 'x', read_only: false },
        { key: 'Cost Center', value: null as unknown as string, read_only: false },
      ],
      config,
    );
    expect(Object.keys(columns.tags)).toEqual(['__proto__', 'cost center']);
    expect(JSON.parse(JSON.stringify(columns.tags))).toEqual(JSON.parse('{"__proto__":"x","cost center":""}'));
    expect(columns.tagsOriginal[1]!.value).toBeNull();
  });

  it('keeps the case of keys when configured to', () => {
    const preserve = testConfig({ tag_key_case: 'preserve', tag_aliases: {} });
    expect(tagColumns([{ key: 'Team', value: 'ml', read_only: false }], preserve).tags).toEqual({ Team: 'ml' });
  });

  it('normalises values by the value rules of the normalised key, keeping the list as received', () => {
    const rules = testConfig({ tag_value_case: 'lower', tag_value_aliases: { TEAM: { 'machine-learning': 'ml' } } });
    const list = [
      { key: 'Team', value: ' Machine-Learning ', read_only: false },
      { key: 'env', value: 'PROD', read_only: false },
    ];
    const columns = tagColumns(list, rules);
    expect(columns.tags).toEqual({ team: 'ml', env: 'prod' });
    expect(columns.tagsOriginal).toEqual(list);
    expect(tagColumns(list, config).tags).toEqual({ team: 'Machine-Learning', env: 'PROD' });
  });
});
