/** The kinds of value a report cell holds, and what HTML, CSV and mail read of a column. */

export type ColumnKind =
  | 'text'
  | 'int'
  /** Exact decimal text (from numeric) with a currency in `currencyKey`; rounded only for display. */
  | 'money'
  | 'decimal'
  /**
   * Already a percentage (67.31 means 67.31 %), as decimal text with two decimals computed in SQL
   * (`round(100 * x / total, 2)`); every format shows the same number.
   */
  | 'percent'
  /** ISO 8601 instant text. */
  | 'timestamp'
  /** ISO date text (YYYY-MM-DD). */
  | 'date'
  /** A flat object of tag key -> value; CSV writes it as JSON. */
  | 'tags'
  | 'bool'
  | 'json'
  /** A list of lines of text (string[]): a bulleted list in HTML, one line each in a CSV cell. */
  | 'lines'
  /**
   * What changed in one resource ({ fields: FieldChange[], tags: TagChange[] }, see `Diff` in
   * diff.ts): HTML draws a small old/new table with tag chips, CSV one readable line, JSON the
   * structure.
   */
  | 'diff';

/** A column as presentation sees it; a report's column (reports/report.ts) adds the rest. */
export interface PresentedColumn {
  key: string;
  label: string;
  kind: ColumnKind;
  /** For money: the row field that holds the ISO currency code. */
  currencyKey?: string;
  /**
   * For money: an hourly price or rate, rounded for people to two digits more than the
   * currency's minor unit (EUR 0.0040 per hour), see src/present/money.ts.
   */
  hourly?: boolean;
  /**
   * For money: a quotient (a cost per GPU-hour), not an amount that adds up: rounded on its own,
   * never footed (present/footing.ts).
   */
  quotient?: boolean;
  /**
   * For decimals: the fraction digits of rounded outputs (HTML, rounded CSV), half away from zero;
   * default 2 (hours, GPU-hours, percentages). Exact outputs keep every digit.
   */
  digits?: number;
}

export type Row = Record<string, unknown>;
