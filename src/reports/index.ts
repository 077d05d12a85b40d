/**
 * The registry of reports served by the web app (navigation order within each section follows
 * this list).
 */
import type { ReportDefinition } from './report.js';
import { anomaliesReport } from './anomalies.js';
import { alertsReport } from './alerts.js';
import { auditReport } from './audit.js';
import { budgetsReport } from './budgets.js';
import { changesReport } from './changes.js';
import { collectionHealthReport } from './collection-health.js';
import { costReport } from './cost.js';
import { flavorsReport } from './flavors.js';
import { focusReport } from './focus.js';
import { scheduledStopsReport } from './idle-scheduled.js';
import { idleReport } from './idle.js';
import { inventoryReport } from './inventory.js';
import { k8sPricesReport } from './k8s-prices.js';
import { monthlyReport } from './monthly.js';
import { overviewReport } from './overview.js';
import { tagHygieneReport } from './tag-hygiene.js';
import { trendReport } from './trend.js';

/** Every report the app serves. */
export function allReports(): ReportDefinition[] {
  return [...dataReports(), ...operationsReports()];
}

/** Reports over the collected cost and inventory data. */
export function dataReports(): ReportDefinition[] {
  return [
    overviewReport,
    costReport,
    monthlyReport,
    budgetsReport,
    anomaliesReport,
    trendReport,
    tagHygieneReport,
    k8sPricesReport,
    focusReport,
    inventoryReport,
    flavorsReport,
    changesReport,
    collectionHealthReport,
  ];
}

/** Reports of what operators did and will do, and what cloudtally told people: idle candidates, scheduled stops, the audit log, the alert history. */
export function operationsReports(): ReportDefinition[] {
  return [idleReport, scheduledStopsReport, auditReport, alertsReport] as ReportDefinition[];
}
