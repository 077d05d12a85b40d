import { urlWith, type RawQuery } from '../present/urls.js';
import type { Column } from '../reports/report.js';
import type { FieldError } from './errors.js';

/*
 * Which columns an HTML table shows. Every report's default set leaves out its `secondary`
 * columns, so the table fits a 1440 px screen; the page's "More columns" control asks for the rest
 * through the URL, so the choice survives sorting, paging, filtering and a shared link:
 *   (no cols)        the default set
 *   cols=all         every column
 *   cols=a,b         exactly these columns (the first, identifying column is always shown);
 *                    repeated cols=a&cols=b (what the column checkboxes send) means the same.
 * JSON and CSV ignore it: they always carry every column (tools and spreadsheets choose their own).
 */

export const COLS_PARAM = 'cols';

export type ColumnChoice = { mode: 'default' } | { mode: 'all' } | { mode: 'list'; keys: string[] };

const COLUMN_KEY = /^[A-Za-z0-9_.:-]{1,80}$/;
const MAX_KEYS = 100;

/** `cols` from the query; a malformed value is a field error (400), an unknown key is not. */
export function parseCols(query: RawQuery, errors: FieldError[]): ColumnChoice {
  const raw = query[COLS_PARAM];
  if (raw === undefined) return { mode: 'default' };
  const keys = [...new Set((Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(',')).map((k) => k.trim()).filter((k) => k !== ''))];
  if (keys.length === 1 && keys[0] === 'all') return { mode: 'all' };
  const bad = keys.find((k) => !COLUMN_KEY.test(k));
  if (keys.length === 0 || keys.length > MAX_KEYS || bad !== undefined) {
    errors.push({
      field: `query.${COLS_PARAM}`,
      message: `cols must be "all" or up to ${MAX_KEYS} column keys separated by commas${bad !== undefined ? ` (got ${JSON.stringify(bad.slice(0, 40))})` : ''}`,
    });
    return { mode: 'default' };
  }
  return { mode: 'list', keys };
}

export interface ColumnSet {
  /** The columns the table shows, in the report's order. */
  visible: Column[];
  /** Column keys asked for that this table does not have (an old or edited link). */
  unknown: string[];
}

/** The report's columns in table order: the identifying column first (see Column.identifies). */
export function tableOrder(columns: readonly Column[]): Column[] {
  const first = columns.find((c) => c.identifies) ?? columns[0];
  return first ? [first, ...columns.filter((c) => c !== first)] : [];
}

/** The columns shown, in table order; the identifying (first) column always is. */
export function chooseColumns(columns: readonly Column[], choice: ColumnChoice): ColumnSet {
  const ordered = tableOrder(columns);
  if (choice.mode === 'all') return { visible: ordered, unknown: [] };
  if (choice.mode === 'default') return { visible: ordered.filter((c, index) => index === 0 || !c.secondary), unknown: [] };
  const wanted = new Set(choice.keys);
  const known = new Set(columns.map((c) => c.key));
  return {
    visible: ordered.filter((c, index) => index === 0 || wanted.has(c.key)),
    unknown: choice.keys.filter((k) => !known.has(k)),
  };
}

/** The "More columns" control: links and a GET form that write `cols` and keep every other parameter. */
export interface ColumnsControlView {
  shown: number;
  total: number;
  /** Every column except the first (always shown), with whether it is shown now. */
  options: Array<{ key: string; label: string; checked: boolean }>;
  action: string;
  /** The other parameters the form keeps (the page too: the same rows, other columns). */
  hidden: Array<{ name: string; value: string }>;
  allHref: string | null;
  defaultHref: string | null;
}

export function columnsControlView(path: string, query: RawQuery, columns: readonly Column[], choice: ColumnChoice, visible: readonly Column[]): ColumnsControlView | null {
  const hasSecondary = columns.some((c) => c.secondary);
  // A table whose every column is shown by default and still shown needs no control.
  if (!hasSecondary && visible.length === columns.length) return null;
  const rest: RawQuery = { ...query };
  delete rest[COLS_PARAM];
  const hidden: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(rest)) for (const v of Array.isArray(value) ? value : [value]) hidden.push({ name, value: v });
  const shown = new Set(visible.map((c) => c.key));
  return {
    shown: visible.length,
    total: columns.length,
    options: tableOrder(columns).slice(1).map((c) => ({ key: c.key, label: c.label, checked: shown.has(c.key) })),
    action: path,
    hidden,
    allHref: choice.mode === 'all' || visible.length === columns.length ? null : urlWith(path, { ...rest, [COLS_PARAM]: 'all' }),
    defaultHref: choice.mode === 'default' ? null : urlWith(path, rest),
  };
}
