import cron from 'node-cron';

/**
 * The longest gap between two consecutive runs of a cron schedule, over its next `samples` runs
 * (a schedule like `0 9,17 * * *` has gaps of 8 h and 16 h: the allowance must cover the longer).
 */
export function longestGapMs(expression: string, samples = 60): number {
  // createTask neither starts a timer nor runs anything; destroy() unregisters it again.
  const task = cron.createTask(expression, () => undefined);
  try {
    const runs = task.getNextRuns(samples).map((d) => d.getTime());
    let longest = 0;
    for (let i = 1; i < runs.length; i++) longest = Math.max(longest, runs[i]! - runs[i - 1]!);
    if (longest === 0) throw new Error(`cron schedule "${expression}" has fewer than two upcoming runs`);
    return longest;
  } finally {
    void task.destroy();
  }
}

/**
 * How old the last good collection may be before /readyz says so: `factor` times the longest gap
 * of the most frequent schedule (any successful run refreshes "the last good collection", so the
 * most frequent collector sets the pace). Default factor 2: one missed or failed run is tolerated.
 */
export function collectionAllowanceMs(schedules: Readonly<Record<string, string>>, factor = 2): number {
  const gaps = Object.values(schedules).map((expression) => longestGapMs(expression));
  if (gaps.length === 0) throw new Error('no collection schedules configured');
  return factor * Math.min(...gaps);
}
