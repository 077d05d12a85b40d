import type { ScheduledStopStatus, StopNotice } from '../db/schema.js';
import { formatInstanceRef, type InstanceRef } from './refs.js';

/** A row of scheduled_stops as the scheduled-stops report and the stop actions read it. */
export interface ScheduledStop {
  id: number;
  ref: InstanceRef;
  refText: string;
  instanceName: string | null;
  owner: string | null;
  reason: string;
  createdBy: string;
  createdByRole: string;
  createdAt: Date;
  dueAt: Date;
  status: ScheduledStopStatus;
  claimedAt: Date | null;
  finishedAt: Date | null;
  cancelledBy: string | null;
  cancelledAt: Date | null;
  result: string | null;
  error: string | null;
  auditId: number | null;
  notices: StopNotice[];
}

export interface ScheduledStopRow extends Record<string, unknown> {
  id: number;
  instance_id: string;
  project_id: number;
  region_id: number;
  instance_name: string | null;
  owner: string | null;
  reason: string;
  created_by: string;
  created_by_role: string;
  created_at: Date;
  due_at: Date;
  status: ScheduledStopStatus;
  claimed_at: Date | null;
  finished_at: Date | null;
  cancelled_by: string | null;
  cancelled_at: Date | null;
  result: string | null;
  error: string | null;
  audit_id: string | null;
  notices: StopNotice[] | null;
}

export function toScheduledStop(row: ScheduledStopRow): ScheduledStop {
  const ref = { projectId: Number(row.project_id), regionId: Number(row.region_id), instanceId: row.instance_id };
  return {
    id: Number(row.id),
    ref,
    refText: formatInstanceRef(ref),
    instanceName: row.instance_name,
    owner: row.owner,
    reason: row.reason,
    createdBy: row.created_by,
    createdByRole: row.created_by_role,
    createdAt: row.created_at,
    dueAt: row.due_at,
    status: row.status,
    claimedAt: row.claimed_at,
    finishedAt: row.finished_at,
    cancelledBy: row.cancelled_by,
    cancelledAt: row.cancelled_at,
    result: row.result,
    error: row.error,
    auditId: row.audit_id === null ? null : Number(row.audit_id),
    notices: row.notices ?? [],
  };
}

