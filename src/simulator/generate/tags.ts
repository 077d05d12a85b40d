import type { Rng } from '../random.js';
import type { SimTag } from '../model.js';
import { DAY_MS, formatDate } from '../timestamps.js';

/**
 * Tags as a real company has them: mostly consistent, with the hygiene problems a cost tool must
 * survive: `Team` next to `team`, `ML` next to `ml`, a key with a dot (`billing.code`), one with a
 * slash (`k8s.io/cluster-name`), a non-ASCII key (`équipe`), a read-only `created-by`, and
 * resources without any tag.
 */

interface TeamSpec {
  costCenter: string;
  spellings: ReadonlyArray<readonly [string, number]>;
  owners: readonly string[];
}

const TEAMS: ReadonlyArray<readonly [TeamSpec, number]> = [
  [{ costCenter: 'CC-4100', spellings: [['ml', 78], ['ML', 22]], owners: ['alice.martin@example.com', 'chen.li@example.com'] }, 26],
  [{ costCenter: 'CC-2200', spellings: [['platform', 100]], owners: ['bob.nguyen@example.com', 'hugo.lefebvre@example.com'] }, 16],
  [{ costCenter: 'CC-3300', spellings: [['data-eng', 85], ['Data-Eng', 15]], owners: ['dana.schmidt@example.com'] }, 14],
  [{ costCenter: 'CC-5100', spellings: [['research', 100]], owners: ['inès.moreau@example.com', 'farid.haddad@example.com'] }, 14],
  [{ costCenter: 'CC-6100', spellings: [['search', 100]], owners: ['grace.okafor@example.com'] }, 8],
  [{ costCenter: 'CC-7300', spellings: [['growth', 100]], owners: ['eve.dupont@example.com'] }, 6],
];

const TEAM_KEYS: ReadonlyArray<readonly [string, number]> = [
  ['team', 86],
  ['Team', 9],
  ['équipe', 5],
];

const ENVS: ReadonlyArray<readonly [string, number]> = [
  ['prod', 45],
  ['staging', 25],
  ['dev', 20],
  ['sandbox', 10],
];

const CREATORS: readonly string[] = ['terraform', 'console', 'api', 'gitlab-ci'];

export type TagProfile = 'normal' | 'idle' | 'untagged';

export interface TagContext {
  now: Date;
  k8sClusterNames: readonly string[];
}

function tag(key: string, value: string, readOnly = false): SimTag {
  return { key, value, read_only: readOnly };
}

/** The team spelling and key of one resource (also used for its name). */
export function pickTeam(rng: Rng): { team: TeamSpec; value: string } {
  const team = rng.weighted(TEAMS);
  return { team, value: rng.weighted(team.spellings) };
}

export function generateTags(rng: Rng, profile: TagProfile, ctx: TagContext, teamValue?: { team: TeamSpec; value: string }): SimTag[] {
  if (profile === 'untagged') return [];
  const tags: SimTag[] = [];
  const chosen = teamValue ?? pickTeam(rng);
  if (profile === 'idle') {
    if (rng.chance(0.6)) tags.push(tag(rng.weighted(TEAM_KEYS), chosen.value));
    tags.push(tag('env', rng.pick(['dev', 'sandbox'])));
    const expired = new Date(ctx.now.getTime() - rng.int(10, 150) * DAY_MS);
    tags.push(tag('expires', formatDate(expired)));
    if (rng.chance(0.5)) tags.push(tag('created-by', rng.pick(CREATORS), true));
    return tags;
  }
  tags.push(tag(rng.weighted(TEAM_KEYS), chosen.value));
  if (rng.chance(0.9)) tags.push(tag('env', rng.weighted(ENVS)));
  const costRoll = rng.float();
  if (costRoll < 0.72) tags.push(tag('cost-center', chosen.team.costCenter));
  else if (costRoll < 0.84) tags.push(tag('billing.code', `BC-${chosen.team.costCenter.slice(3)}`));
  if (rng.chance(0.72)) tags.push(tag('owner', rng.pick(chosen.team.owners)));
  if (ctx.k8sClusterNames.length > 0 && rng.chance(0.08)) {
    tags.push(tag('k8s.io/cluster-name', rng.pick(ctx.k8sClusterNames)));
  }
  if (rng.chance(0.35)) tags.push(tag('created-by', rng.pick(CREATORS), true));
  return tags;
}
