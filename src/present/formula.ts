/**
 * The characters a CSV cell must not start with, as code points: = + - @ TAB CR, and the
 * full-width ＝ ＋ － ＠ (U+FF1D, U+FF0B, U+FF0D, U+FF20), which spreadsheets in East Asian locales
 * read as formula starts too. One list for both CSV writers (csv.ts, csv-sql.ts: Postgres's
 * ascii() gives a UTF-8 database's code point, so the same numbers serve there).
 */
export const FORMULA_START_CODES: readonly number[] = [0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d, 0xff1d, 0xff0b, 0xff0d, 0xff20];
