import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import type { ReportContext, ReportDefinition } from '../report.js';

/** What every cloudtally report reads: the database, the configuration and the report's "now". */
export type ReportCtx = ReportContext<Database, Config>;

/** A report of this project: its context is always a Database and the Config. */
export type Report<P> = ReportDefinition<P, Database, Config>;
