/**
 * The characters a CSV cell must not start with, as code points: = + - @ TAB CR (a spreadsheet
 * would read the cell as a formula). One list for both CSV writers (csv.ts, csv-sql.ts).
 */
export const FORMULA_START_CODES: readonly number[] = [0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d];
