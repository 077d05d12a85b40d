/** The notes on how old the latest snapshots a report read are. */
import { formatAge, formatInstant } from './format.js';
import type { SnapshotInfo } from '../../db/latest-snapshots.js';

/**
 * The notes every report carries about its data's age: the newest and oldest of the snapshots
 * it read, or that there is none yet.
 */
export function freshnessNotes(now: Date, snapshots: readonly Pick<SnapshotInfo, 'taken_at' | 'scope_key'>[], what: string): string[] {
  if (snapshots.length === 0) return [`No complete snapshot of ${what} yet: nothing to show until a collection has finished.`];
  let newest = snapshots[0]!;
  let oldest = snapshots[0]!;
  for (const s of snapshots) {
    if (s.taken_at > newest.taken_at) newest = s;
    if (s.taken_at < oldest.taken_at) oldest = s;
  }
  const scopes = new Set(snapshots.map((s) => s.scope_key)).size;
  const notes = [
    `Data: the latest complete snapshot of ${what} ${scopes === 1 ? 'in its one scope' : `in each of ${scopes} scopes`}, taken ${formatInstant(newest.taken_at)} (${formatAge(now, newest.taken_at)} old).`,
  ];
  if (newest.taken_at.getTime() - oldest.taken_at.getTime() > 3600_000) {
    notes.push(`The oldest is scope ${oldest.scope_key}, taken ${formatInstant(oldest.taken_at)} (${formatAge(now, oldest.taken_at)} old): a later collection of it failed or it is no longer collected.`);
  }
  return notes;
}
