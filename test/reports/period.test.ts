/**
 * The period parser of the cost reports (src/reports/shared/period.ts) on its own: every form
 * `period=` and `from`/`to` accept, what each resolves to seen from a given now (days, label, the
 * period compared with, where the known part ends), the defaults, and each rejection with its
 * message. Days are UTC days: there is no other time zone. (The same forms through the reports
 * over HTTP, with figures: periods.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkPeriodParams, monthsOf, periodGiven, periodParamShape, resolvePeriod, type PeriodParams } from '../../src/reports/shared/period.js';

/** The period parameters as a report's schema takes them. */
const schema = z.strictObject(periodParamShape).superRefine(checkPeriodParams);

/** The problems of a query, as `field: message`; [] when it is accepted. */
function problems(query: PeriodParams): string[] {
  const parsed = schema.safeParse(query);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

const NOW = new Date('2025-03-10T12:00:00Z');

/** The days of a resolved period and of the one it is compared with. */
function days(p: PeriodParams, now = NOW, fallback?: Parameters<typeof resolvePeriod>[2]) {
  const r = resolvePeriod(p, now, fallback);
  return { label: r.label, from: r.fromDay, to: r.toDay, previous: [r.previous.fromDay, r.previous.toDay] };
}

/** The 400 a period that cannot be resolved answers: the parameter it names and the message. */
function rejection(p: PeriodParams, now = NOW): { status: unknown; field: string; message: string } {
  try {
    resolvePeriod(p, now);
  } catch (err) {
    const e = err as { status?: unknown; errors?: Array<{ field: string; message: string }> };
    expect(e.errors).toHaveLength(1);
    return { status: e.status, field: e.errors![0]!.field, message: e.errors![0]!.message };
  }
  throw new Error(`${JSON.stringify(p)} was accepted`);
}

describe('the forms the schema accepts', () => {
  it.each([
    { period: '2025-02' },
    { period: '2025-Q1' },
    { period: '2025-Q4' },
    { period: '2025' },
    { period: 'mtd' },
    { period: 'last-month' },
    { period: 'qtd' },
    { period: 'ytd' },
    { period: 'custom' },
    { period: 'custom', from: '2025-02-01', to: '2025-02-10' },
    { from: '2025-02-03', to: '2025-02-10' },
    { from: '2025-01', to: '2025-02' },
    { from: '2025-02-03' },
    { to: '2025-02' },
    { from: '2024-02-29' },
    { from: '2000-02-29' },
    { period: '1970-01' },
    { period: '9999-Q4' },
    { from: '1970-01-01', to: '9999-12-31' },
    { from: '1970-01', to: '9999-12' },
    {},
  ])('%j', (query) => {
    expect(problems(query)).toEqual([]);
  });
});

describe('what the schema rejects, and the message', () => {
  const NOT_A_PERIOD = 'period: period must be one of YYYY-MM, YYYY-Qn, YYYY, mtd, last-month, last-7-days, last-30-days, qtd, last-quarter or ytd (or from=YYYY-MM-DD&to=YYYY-MM-DD)';
  it.each([
    [{ period: '2025-13' }, NOT_A_PERIOD],
    [{ period: '2025-00' }, NOT_A_PERIOD],
    [{ period: '2025-2' }, NOT_A_PERIOD],
    [{ period: '2025-Q5' }, NOT_A_PERIOD],
    [{ period: '2025-q1' }, NOT_A_PERIOD],
    [{ period: 'Q1-2025' }, NOT_A_PERIOD],
    [{ period: 'lastmonth' }, NOT_A_PERIOD],
    [{ period: 'MTD' }, NOT_A_PERIOD],
    [{ period: ' 2025-02' }, NOT_A_PERIOD],
    [{ period: '25' }, NOT_A_PERIOD],
    [{ period: '' }, NOT_A_PERIOD],
    [{ period: 'last-month-too' }, 'period: period must be one of YYYY-MM, YYYY-Qn, YYYY, mtd, last-month, last-7-days, last-30-days, qtd, last-quarter or ytd'],
    [{ period: '1969' }, 'period: period must name a year from 1970 to 9999'],
    [{ period: '0000-Q1' }, 'period: period must name a year from 1970 to 9999'],
    [{ from: '2025-02-30' }, 'from: from must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)'],
    [{ from: '2023-02-29' }, 'from: from must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)'],
    [{ to: '2100-02-29' }, 'to: to must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)'],
    [{ to: '2025-04-31' }, 'to: to must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)'],
    [{ from: '2025-13' }, 'from: from must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)'],
    [{ from: '2025/02/01' }, 'from: from must be a date YYYY-MM-DD or a month YYYY-MM'],
    [{ from: '2025-2-1' }, 'from: from must be a date YYYY-MM-DD or a month YYYY-MM'],
    [{ to: '2025-02-01T00:00:00Z' }, 'to: to must be a date YYYY-MM-DD or a month YYYY-MM'],
    [{ to: '10000-01-01' }, 'to: to must be a date YYYY-MM-DD or a month YYYY-MM'],
    [{ from: '1969-12-31' }, 'from: from must be a date from 1970-01-01 to 9999-12-31 (or a month from 1970-01 to 9999-12)'],
    [{ from: '1969-12' }, 'from: from must be a date from 1970-01-01 to 9999-12-31 (or a month from 1970-01 to 9999-12)'],
    [{ period: '2025-02', from: '2025-02-01' }, 'period: give either period or from/to, not both (period=custom uses from/to)'],
    [{ period: 'mtd', to: '2025-02-01' }, 'period: give either period or from/to, not both (period=custom uses from/to)'],
  ])('%j', (query, message) => {
    expect(problems(query)).toEqual([message]);
  });

  it('names every bad parameter at once', () => {
    expect(problems({ from: '2025-02-30', to: 'soon' })).toEqual([
      'from: from must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)',
      'to: to must be a date YYYY-MM-DD or a month YYYY-MM',
    ]);
  });
});

describe('calendar periods', () => {
  it.each([
    // Months, their ends and the month before (February of leap and common years).
    [{ period: '2025-02' }, { label: '2025-02', from: '2025-02-01', to: '2025-02-28', previous: ['2025-01-01', '2025-01-31'] }],
    [{ period: '2024-02' }, { label: '2024-02', from: '2024-02-01', to: '2024-02-29', previous: ['2024-01-01', '2024-01-31'] }],
    [{ period: '2024-03' }, { label: '2024-03', from: '2024-03-01', to: '2024-03-31', previous: ['2024-02-01', '2024-02-29'] }],
    [{ period: '2023-03' }, { label: '2023-03', from: '2023-03-01', to: '2023-03-31', previous: ['2023-02-01', '2023-02-28'] }],
    [{ period: '2024-01' }, { label: '2024-01', from: '2024-01-01', to: '2024-01-31', previous: ['2023-12-01', '2023-12-31'] }],
    [{ period: '2024-04' }, { label: '2024-04', from: '2024-04-01', to: '2024-04-30', previous: ['2024-03-01', '2024-03-31'] }],
    // Quarters, compared with the quarter before (across the year for Q1).
    [{ period: '2025-Q1' }, { label: '2025-Q1', from: '2025-01-01', to: '2025-03-31', previous: ['2024-10-01', '2024-12-31'] }],
    [{ period: '2024-Q2' }, { label: '2024-Q2', from: '2024-04-01', to: '2024-06-30', previous: ['2024-01-01', '2024-03-31'] }],
    [{ period: '2024-Q3' }, { label: '2024-Q3', from: '2024-07-01', to: '2024-09-30', previous: ['2024-04-01', '2024-06-30'] }],
    [{ period: '2024-Q4' }, { label: '2024-Q4', from: '2024-10-01', to: '2024-12-31', previous: ['2024-07-01', '2024-09-30'] }],
    // Years.
    [{ period: '2024' }, { label: '2024', from: '2024-01-01', to: '2024-12-31', previous: ['2023-01-01', '2023-12-31'] }],
    // The month before now's month, across a year's end too.
    [{ period: 'last-month' }, { label: '2025-02', from: '2025-02-01', to: '2025-02-28', previous: ['2025-01-01', '2025-01-31'] }],
  ])('%j', (p, expected) => {
    expect(days(p)).toEqual(expected);
  });

  it('takes last-month across a year end and in a leap February', () => {
    expect(days({ period: 'last-month' }, new Date('2025-01-15T08:00:00Z'))).toEqual({ label: '2024-12', from: '2024-12-01', to: '2024-12-31', previous: ['2024-11-01', '2024-11-30'] });
    expect(days({ period: 'last-month' }, new Date('2024-03-01T00:00:00Z'))).toEqual({ label: '2024-02', from: '2024-02-01', to: '2024-02-29', previous: ['2024-01-01', '2024-01-31'] });
  });

  it('ends a period that has ended at 00:00 UTC after its last day, with every day known', () => {
    const feb = resolvePeriod({ period: '2025-02' }, NOW);
    expect(feb.start).toEqual(new Date('2025-02-01T00:00:00Z'));
    expect(feb.end).toEqual(new Date('2025-03-01T00:00:00Z'));
    expect(feb.lastDay).toBe('2025-02-28');
  });

  it('ends a period that reaches past now at now, its last known day today', () => {
    const march = resolvePeriod({ period: '2025-03' }, NOW);
    expect([march.fromDay, march.toDay]).toEqual(['2025-03-01', '2025-03-31']);
    expect(march.end).toEqual(NOW);
    expect(march.lastDay).toBe('2025-03-10');
    const year = resolvePeriod({ period: '2025' }, NOW);
    expect([year.toDay, year.lastDay, year.end]).toEqual(['2025-12-31', '2025-03-10', NOW]);
  });

  it('ends the last month and year that can be named on 9999-12-31, not in year 10000', () => {
    const at = new Date('9999-12-31T12:00:00Z');
    expect(days({ period: '9999-12' }, at)).toEqual({ label: '9999-12', from: '9999-12-01', to: '9999-12-31', previous: ['9999-11-01', '9999-11-30'] });
    expect(days({ period: '9999' }, at)).toMatchObject({ from: '9999-01-01', to: '9999-12-31' });
    expect(days({ period: '9999-Q4' }, at)).toMatchObject({ from: '9999-10-01', to: '9999-12-31' });
    expect(days({ from: '9999-12', to: '9999-12' }, at)).toMatchObject({ from: '9999-12-01', to: '9999-12-31' });
  });

  it('compares the first month that can be named with the month before it', () => {
    expect(days({ period: '1970-01' })).toEqual({ label: '1970-01', from: '1970-01-01', to: '1970-01-31', previous: ['1969-12-01', '1969-12-31'] });
  });
});

describe('periods to date', () => {
  it('mtd: from the first of now\'s month to today, compared with as many days of the month before', () => {
    expect(days({ period: 'mtd' })).toEqual({ label: 'month to date (2025-03)', from: '2025-03-01', to: '2025-03-10', previous: ['2025-02-01', '2025-02-10'] });
    const r = resolvePeriod({ period: 'mtd' }, NOW);
    expect([r.start, r.end, r.lastDay]).toEqual([new Date('2025-03-01T00:00:00Z'), NOW, '2025-03-10']);
  });

  it('mtd on a month\'s last days: the month before is not run past its own end', () => {
    expect(days({ period: 'mtd' }, new Date('2025-03-31T23:59:59Z'))).toMatchObject({ from: '2025-03-01', to: '2025-03-31', previous: ['2025-02-01', '2025-02-28'] });
    expect(days({ period: 'mtd' }, new Date('2024-03-30T10:00:00Z'))).toMatchObject({ previous: ['2024-02-01', '2024-02-29'] });
    expect(days({ period: 'mtd' }, new Date('2025-05-31T10:00:00Z'))).toMatchObject({ previous: ['2025-04-01', '2025-04-30'] });
    expect(days({ period: 'mtd' }, new Date('2025-03-01T00:00:00Z'))).toMatchObject({ from: '2025-03-01', to: '2025-03-01', previous: ['2025-02-01', '2025-02-01'] });
  });

  it('qtd and ytd: from the start of the quarter or year, compared with as many days of the one before', () => {
    const may20 = new Date('2025-05-20T06:00:00Z');
    // 2025-04-01 .. 05-20 is 50 days: 2025-01-01 .. 02-19.
    expect(days({ period: 'qtd' }, may20)).toEqual({ label: 'quarter to date (2025-Q2)', from: '2025-04-01', to: '2025-05-20', previous: ['2025-01-01', '2025-02-19'] });
    // 2025-01-01 .. 05-20 is 140 days: 2024 is a leap year, so 2024-01-01 .. 05-19.
    expect(days({ period: 'ytd' }, may20)).toEqual({ label: 'year to date (2025)', from: '2025-01-01', to: '2025-05-20', previous: ['2024-01-01', '2024-05-19'] });
    expect(days({ period: 'qtd' }, new Date('2025-01-01T00:00:00Z'))).toEqual({ label: 'quarter to date (2025-Q1)', from: '2025-01-01', to: '2025-01-01', previous: ['2024-10-01', '2024-10-01'] });
  });

  it('ytd on the last day of a leap year: the year before is not run into the leap year', () => {
    expect(days({ period: 'ytd' }, new Date('2024-12-31T18:00:00Z'))).toEqual({ label: 'year to date (2024)', from: '2024-01-01', to: '2024-12-31', previous: ['2023-01-01', '2023-12-31'] });
  });
});

describe('from and to', () => {
  it('takes inclusive days, compared with as many days just before', () => {
    expect(days({ from: '2025-02-03', to: '2025-02-10' })).toEqual({ label: '2025-02-03 to 2025-02-10', from: '2025-02-03', to: '2025-02-10', previous: ['2025-01-26', '2025-02-02'] });
    expect(days({ from: '2025-02-03', to: '2025-02-03' })).toEqual({ label: '2025-02-03 to 2025-02-03', from: '2025-02-03', to: '2025-02-03', previous: ['2025-02-02', '2025-02-02'] });
    expect(days({ period: 'custom', from: '2025-02-03', to: '2025-02-10' })).toEqual(days({ from: '2025-02-03', to: '2025-02-10' }));
  });

  it('expands months to their first and last day', () => {
    // 2025-01-01 .. 02-28 is 59 days: 2024-11-03 .. 12-31.
    expect(days({ from: '2025-01', to: '2025-02' })).toEqual({ label: '2025-01-01 to 2025-02-28', from: '2025-01-01', to: '2025-02-28', previous: ['2024-11-03', '2024-12-31'] });
    expect(days({ from: '2024-02', to: '2024-02' })).toMatchObject({ from: '2024-02-01', to: '2024-02-29' });
    expect(days({ from: '2025-02-15', to: '2025-02' })).toMatchObject({ from: '2025-02-15', to: '2025-02-28' });
  });

  it('runs from alone to today, and starts to alone on the first of its month', () => {
    expect(days({ from: '2025-02-20' })).toMatchObject({ label: '2025-02-20 to 2025-03-10', from: '2025-02-20', to: '2025-03-10' });
    expect(resolvePeriod({ from: '2025-02-20' }, NOW).end).toEqual(NOW);
    expect(days({ to: '2025-02-10' })).toMatchObject({ from: '2025-02-01', to: '2025-02-10' });
    expect(days({ to: '2025-01' })).toMatchObject({ from: '2025-01-01', to: '2025-01-31' });
    expect(days({ from: '2025-03-10' })).toMatchObject({ from: '2025-03-10', to: '2025-03-10' });
  });

  it('allows three years less a day, counting 29 February as 28 February three years on', () => {
    expect(days({ from: '2022-01-01', to: '2024-12-31' })).toMatchObject({ from: '2022-01-01', to: '2024-12-31' });
    expect(days({ from: '2024-02-29', to: '2027-02-27' })).toMatchObject({ to: '2027-02-27' });
    expect(rejection({ from: '2024-02-29', to: '2027-02-28' })).toEqual({ status: 400, field: 'query.to', message: 'a period spans at most 3 years (from 2024-02-29 to 2027-02-28 is longer)' });
    expect(rejection({ from: '2022-01-01', to: '2025-01-01' })).toEqual({ status: 400, field: 'query.to', message: 'a period spans at most 3 years (from 2022-01-01 to 2025-01-01 is longer)' });
    expect(rejection({ from: '2022-01', to: '2025-01' })).toEqual({ status: 400, field: 'query.to', message: 'a period spans at most 3 years (from 2022-01-01 to 2025-01-31 is longer)' });
  });
});

describe('what only now can reject (400 naming the parameter)', () => {
  it.each([
    [{ from: '2025-03-01', to: '2025-02-01' }, 'query.from', 'from (2025-03-01) must not be after to (2025-02-01)'],
    [{ from: '2025-03', to: '2025-02' }, 'query.from', 'from (2025-03-01) must not be after to (2025-02-28)'],
    [{ period: '2025-04' }, 'query.period', 'period 2025-04 starts 2025-04-01, after today (2025-03-10): there are no figures for it yet'],
    [{ period: '2025-Q2' }, 'query.period', 'period 2025-Q2 starts 2025-04-01, after today (2025-03-10): there are no figures for it yet'],
    [{ period: '2026' }, 'query.period', 'period 2026 starts 2026-01-01, after today (2025-03-10): there are no figures for it yet'],
    [{ from: '2025-03-11' }, 'query.from', 'from (2025-03-11) must not be after today (2025-03-10)'],
    [{ from: '2025-04', to: '2025-05' }, 'query.from', 'from (2025-04-01) must not be after today (2025-03-10)'],
    [{ to: '2025-04-15' }, 'query.to', 'to (2025-04-15) reaches no day up to today (2025-03-10): the period would start 2025-04-01'],
    [{ period: 'custom', from: '2025-03-11', to: '2025-03-12' }, 'query.from', 'from (2025-03-11) must not be after today (2025-03-10)'],
  ])('%j', (p, field, message) => {
    expect(rejection(p)).toEqual({ status: 400, field, message });
  });

  it('accepts a period that begins today', () => {
    expect(days({ period: '2025-03' }, new Date('2025-03-01T00:00:00Z'))).toMatchObject({ from: '2025-03-01', to: '2025-03-31' });
    expect(days({ from: '2025-03-10', to: '2025-03-20' })).toMatchObject({ from: '2025-03-10', to: '2025-03-20' });
  });
});

describe('no period given', () => {
  it('defaults to month to date, or to the last n months including this one', () => {
    expect(periodGiven({})).toBe(false);
    expect(days({})).toEqual(days({ period: 'mtd' }));
    expect(days({ period: 'custom' })).toEqual(days({ period: 'mtd' }));
    expect(days({}, NOW, { lastMonths: 3 })).toEqual({ label: '2025-01 to 2025-03', from: '2025-01-01', to: '2025-03-10', previous: ['2024-10-01', '2024-12-31'] });
    expect(days({}, NOW, { lastMonths: 1 })).toEqual({ label: '2025-03 to 2025-03', from: '2025-03-01', to: '2025-03-10', previous: ['2025-02-01', '2025-02-28'] });
    // A given period wins over the default.
    expect(days({ period: '2025-02' }, NOW, { lastMonths: 3 })).toMatchObject({ from: '2025-02-01', to: '2025-02-28' });
    expect([periodGiven({ period: 'mtd' }), periodGiven({ from: '2025-01-01' }), periodGiven({ to: '2025-01' })]).toEqual([true, true, true]);
  });
});

describe('time zones', () => {
  it('counts days in UTC: now is placed on its UTC day whatever zone it was written in', () => {
    // 00:30 on 1 March in UTC+1 is still 28 February in UTC.
    const now = new Date('2025-03-01T00:30:00+01:00');
    expect(days({ period: 'mtd' }, now)).toMatchObject({ label: 'month to date (2025-02)', from: '2025-02-01', to: '2025-02-28' });
    expect(days({ period: 'last-month' }, now)).toMatchObject({ label: '2025-01' });
    expect(rejection({ period: '2025-03' }, now)).toMatchObject({ field: 'query.period', message: 'period 2025-03 starts 2025-03-01, after today (2025-02-28): there are no figures for it yet' });
    // 23:30 on 31 December in UTC-1 is already the new year in UTC.
    expect(days({ period: 'ytd' }, new Date('2024-12-31T23:30:00-01:00'))).toMatchObject({ label: 'year to date (2025)', from: '2025-01-01', to: '2025-01-01' });
  });

  it('starts and ends periods at 00:00 UTC', () => {
    const r = resolvePeriod({ from: '2025-02-03', to: '2025-02-10' }, NOW);
    expect(r.start.toISOString()).toBe('2025-02-03T00:00:00.000Z');
    expect(r.end.toISOString()).toBe('2025-02-11T00:00:00.000Z');
  });
});

describe('monthsOf', () => {
  it('lists the calendar months a range touches, in order', () => {
    expect(monthsOf({ fromDay: '2024-11-15', toDay: '2025-02-01' })).toEqual(['2024-11', '2024-12', '2025-01', '2025-02']);
    expect(monthsOf({ fromDay: '2025-02-28', toDay: '2025-02-28' })).toEqual(['2025-02']);
    expect(monthsOf({ fromDay: '2024-01-31', toDay: '2024-03-01' })).toEqual(['2024-01', '2024-02', '2024-03']);
  });
});
