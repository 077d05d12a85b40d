/**
 * Scheduled delivery of reports (`deliveries` in the configuration): each entry runs on its cron
 * schedule; each slot is claimed once across replicas through the collection's schedule claims
 * (schedule_claims, src/collect/coordinator.ts), rendered as the report's CSV by the web export's
 * own writer (src/present/csv.ts), and enqueued in the outbox under `delivery:<id>:<slot ISO>` (unique:
 * a slot is never enqueued twice, even if two replicas got past the claim). Email channels get
 * the CSV attached; webhooks get the link and a summary (row count, totals per currency).
 */
import { Writable } from 'node:stream';
import cron, { type ScheduledTask } from 'node-cron';
import { createPgRunCoordinator, type PgRunCoordinator } from '../collect/coordinator.js';
import { deliveryParamProblems, type Config, type DeepReadonly, type DeliverySettings } from '../config/index.js';
import type { Database } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { isPartial } from '../reports/shared/coverage.js';
import { exportRegionNames } from '../reports/shared/regions.js';
import type { Column, ReportDefinition, Row } from '../reports/report.js';
import { deliveryMessageKey } from '../read-models/outbox.js';
import { csvFilename, streamCsv } from '../present/csv.js';
import { roundMoney } from '../present/money.js';
import { reportMetadataUrl, reportUrls, urlWith } from '../present/urls.js';
import type { OutgoingMessage } from './message.js';
import { enqueueMessage } from './outbox.js';

type AnyReport = ReportDefinition<unknown, unknown, unknown>;

export interface DeliveryDeps {
  db: Database;
  config: Config;
  reports: readonly AnyReport[];
  logger: Logger;
  /** Claimant in schedule_claims (unique per scheduler object). */
  claimant: string;
}

/** Mail servers commonly refuse more; a bigger CSV is not attached (the mail carries the link). */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

export type SlotResult = 'enqueued' | 'already-enqueued' | 'claimed-elsewhere';

export interface DeliveryScheduler {
  start(): void;
  /** Delivers slot `slot` of the delivery at `index` (what the cron task does when it fires). */
  deliverSlot(index: number, slot: Date): Promise<SlotResult>;
  stop(): Promise<void>;
  /** Resolves when no slot of this scheduler is being delivered. */
  idle(): Promise<void>;
}

/** The claim's task name: node-cron coordination keys are `<name>:<slot>`, grouped up to the first `.`. */
function taskName(delivery: DeepReadonly<DeliverySettings>): string {
  return `delivery-${encodeURIComponent(delivery.id).replace(/\./g, '%2E')}`;
}

export function createDeliveryScheduler(deps: DeliveryDeps, options: { timezone?: string } = {}): DeliveryScheduler {
  const log = deps.logger.child({ component: 'deliveries' });
  const coordinator: PgRunCoordinator = createPgRunCoordinator(deps.db, deps.claimant);
  const byName = new Map(deps.reports.map((r) => [r.name, r]));
  const deliveries = deps.config.deliveries;
  // Checked when the configuration was loaded; checked again here for callers that did not pass the reports.
  deliveries.forEach((d, i) => {
    const report = byName.get(d.report);
    if (!report) throw new Error(`deliveries[${i}].report: "${d.report}" is not a report`);
    const problems = deliveryParamProblems(report, d.params as Record<string, string | string[]>);
    if (problems.length > 0) throw new Error(`deliveries[${i}].params: ${problems.map((p) => `${p.path || '(params)'} ${p.message}`).join('; ')}`);
  });
  let tasks: ScheduledTask[] = [];
  const inFlight = new Set<Promise<unknown>>();

  async function deliverSlot(index: number, slot: Date): Promise<SlotResult> {
    const delivery = deliveries[index];
    if (!delivery) throw new Error(`no delivery at index ${index}`);
    // The claim's lifetime does not matter much: the message key makes the slot once-only anyway.
    if (!(await coordinator.shouldRun(`${taskName(delivery)}:${slot.toISOString()}`, 0))) return 'claimed-elsewhere';
    const message = await renderDelivery(deps, delivery, slot);
    return (await enqueueMessage(deps.db, message)) ? 'enqueued' : 'already-enqueued';
  }

  function track<T>(work: Promise<T>): Promise<T> {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  return {
    start() {
      if (tasks.length > 0) return;
      tasks = deliveries.map((d, i) =>
        cron.schedule(
          d.schedule,
          async (context) => {
            try {
              const result = await track(deliverSlot(i, context.date));
              log.info({ delivery: d.id, report: d.report, slot: context.date.toISOString(), result }, 'scheduled delivery');
            } catch (err) {
              log.error({ err, delivery: d.id, report: d.report, slot: context.date.toISOString() }, 'scheduled delivery failed');
            }
          },
          { name: taskName(d), noOverlap: true, timezone: options.timezone },
        ),
      );
      if (tasks.length > 0) log.info({ deliveries: deliveries.map((d) => ({ id: d.id, report: d.report, schedule: d.schedule })) }, 'scheduled deliveries started');
    },
    deliverSlot: (index, slot) => track(deliverSlot(index, slot)),
    async stop() {
      for (const task of tasks) await task.destroy();
      tasks = [];
      await Promise.allSettled([...inFlight]);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** The report's CSV for the slot (the report computed as of the slot), with link and summary. */
export async function renderDelivery(deps: Pick<DeliveryDeps, 'db' | 'config' | 'reports'>, delivery: DeepReadonly<DeliverySettings>, slot: Date): Promise<OutgoingMessage> {
  const report = deps.reports.find((r) => r.name === delivery.report);
  if (!report) throw new Error(`"${delivery.report}" is not a report`);
  const query = delivery.params as Record<string, string | string[]>;
  const params = await report.params.parseAsync(query);
  // A team's delivery carries only the team (the configuration admits a scope only on reports that split by team).
  if (delivery.scope && !report.scoped) throw new Error(`"${delivery.report}" cannot be delivered for a team scope`);
  const scope = delivery.scope ? { by: delivery.scope.by, key: delivery.scope.key, values: [...delivery.scope.values] } : null;
  const exported = await report.export({ db: deps.db, config: deps.config, now: slot, scope }, params);

  let totals: Row[] = [];
  const readTotals = exported.totals ? async () => (totals = await exported.totals!()) : undefined;
  let rowCount = 0;
  async function* counted(): AsyncGenerator<Row> {
    for await (const row of exported.rows) {
      rowCount++;
      yield row;
    }
  }
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  });
  const regionNames = await exportRegionNames(deps.db, exported.columns, params);
  await streamCsv(sink, exported.columns, counted(), { exact: exported.exactMoney === true, totals: readTotals, ...(regionNames ? { regionNames } : {}) });
  const csv = Buffer.concat(chunks);

  const partial = exported.coverage !== undefined && isPartial(exported.coverage);
  const filename = csvFilename(report.name, query, slot, { partial }).ascii;
  const base = deps.config.web.publicUrl;
  const urls = reportUrls(report.name);
  const link = base ? `${base}${urlWith(urls.html, query)}` : undefined;
  const csvLink = base ? `${base}${urlWith(urls.csv, query)}` : null;
  const totalLines = totalsText(exported.columns, totals);
  // A dataset export's metadata travels with it: a file beside the CSV, the document in the webhook's data.
  const metadata = report.datasetMetadata;
  const metadataLink = metadata && base ? `${base}${reportMetadataUrl(report.name)}` : null;
  const metadataFilename = filename.replace(/\.csv$/, '.metadata.json');
  const label = delivery.name ?? report.title;
  const attach = csv.length <= MAX_ATTACHMENT_BYTES;
  const text = [
    `${report.title}${paramsText(query)}, as of ${slot.toISOString()}: ${rowCount} row${rowCount === 1 ? '' : 's'}${partial ? ' (the period is not fully covered by snapshots)' : ''}.`,
    ...totalLines,
    attach ? `The CSV is attached to mail (${filename}).` : `The CSV (${csv.length} bytes) is too large to attach; download it from the report.`,
    ...(csvLink ? [`CSV: ${csvLink}`] : []),
    ...(metadata ? [`Dataset metadata: ${Object.entries(metadata.headers).map(([k, v]) => `${k} ${v}`).join(', ')}${attach ? ` (${metadataFilename} attached)` : ''}${metadataLink ? `; ${metadataLink}` : ''}.`] : []),
  ].join('\n');
  return {
    key: deliveryMessageKey(delivery.id, slot),
    channels: delivery.notify,
    subject: `cloudtally: ${label} (${slot.toISOString().slice(0, 10)})`,
    text,
    data: {
      kind: 'delivery',
      delivery: delivery.id,
      report: report.name,
      params: query,
      slot: slot.toISOString(),
      rows: rowCount,
      totals: totalsData(exported.columns, totals),
      partial,
      filename,
      csv_url: csvLink,
      ...(metadata ? { metadata: metadata.document, metadata_url: metadataLink } : {}),
    },
    ...(link ? { link } : {}),
    ...(attach ? { attachment: { filename, contentType: 'text/csv; charset=utf-8', content: csv.toString('utf8') } } : {}),
    ...(attach && metadata ? { sidecar: { filename: metadataFilename, contentType: 'application/json', content: JSON.stringify(metadata.document, null, 2) } } : {}),
  };
}

function paramsText(query: Record<string, string | string[]>): string {
  const parts = Object.entries(query).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function moneyColumns(columns: readonly Column[]): Column[] {
  return columns.filter((c) => c.kind === 'money' && c.currencyKey);
}

/** Per totals row (one per currency): each money column, rounded for people like the CSV. */
function totalsData(columns: readonly Column[], totals: readonly Row[]): Array<Record<string, string | null>> {
  return totals.map((row) => {
    const out: Record<string, string | null> = {};
    for (const c of moneyColumns(columns)) {
      const currency = row[c.currencyKey!];
      out.currency ??= typeof currency === 'string' ? currency : null;
      out[c.key] = roundMoney(row[c.key], typeof currency === 'string' ? currency : null, c.hourly ?? false);
    }
    return out;
  });
}

function totalsText(columns: readonly Column[], totals: readonly Row[]): string[] {
  const money = moneyColumns(columns);
  return totals.flatMap((row) => {
    const parts = money
      .map((c) => {
        const currency = row[c.currencyKey!];
        const amount = roundMoney(row[c.key], typeof currency === 'string' ? currency : null, c.hourly ?? false);
        return amount === null ? null : `${c.label} ${amount}${typeof currency === 'string' ? ` ${currency}` : ''}`;
      })
      .filter((p): p is string => p !== null);
    return parts.length > 0 ? [`Total: ${parts.join(', ')}`] : [];
  });
}
