/**
 * Asynchronous operations. A task's outcome (success with an effect, or an error text) is decided
 * when it starts; it is RUNNING until `finishAt` and then FINISHED or ERROR. Nothing runs on a
 * timer: `settle()` applies the effects that are due, and every read calls it first, so the state
 * is computed lazily and no timer keeps the process alive.
 */

export type SimTaskStatus = 'RUNNING' | 'FINISHED' | 'ERROR';

export interface SimTaskStart {
  type: string;
  /** What the task is about (e.g. the name of the cluster it creates), to see names in flight. */
  subject?: string;
  projectId: number | null;
  regionId: number | null;
  delayMs: number;
  /** Non-null when the operation must fail: the task ends in ERROR with this text. */
  error: string | null;
  /** Ids the operation creates, by kind (e.g. `{ ai_clusters: [id] }`). */
  createdResources?: Record<string, string[]>;
  /** Applied once, when the task finishes successfully. */
  apply?: () => void;
}

interface SimTaskRecord extends SimTaskStart {
  id: string;
  createdAt: Date;
  finishAt: Date;
  settled: boolean;
}

/** A task as of now. */
export interface SimTaskView {
  id: string;
  type: string;
  subject: string | null;
  status: SimTaskStatus;
  error: string | null;
  projectId: number | null;
  regionId: number | null;
  createdAt: Date;
  /** When it finished; null while RUNNING. */
  finishedAt: Date | null;
  createdResources: Record<string, string[]> | null;
}

export class TaskStore {
  private readonly tasks = new Map<string, SimTaskRecord>();
  private pending: SimTaskRecord[] = [];

  constructor(
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {}

  start(input: SimTaskStart): SimTaskView {
    const createdAt = this.clock();
    const record: SimTaskRecord = {
      ...input,
      id: this.newId(),
      createdAt,
      finishAt: new Date(createdAt.getTime() + Math.max(0, input.delayMs)),
      settled: false,
    };
    this.tasks.set(record.id, record);
    this.pending.push(record);
    return this.view(record, createdAt);
  }

  /** Applies the effects of every task that is due, oldest finish first; true when one had an effect. */
  settle(): boolean {
    if (this.pending.length === 0) return false;
    const now = this.clock().getTime();
    const due = this.pending.filter((t) => t.finishAt.getTime() <= now);
    if (due.length === 0) return false;
    this.pending = this.pending.filter((t) => t.finishAt.getTime() > now);
    due.sort((a, b) => a.finishAt.getTime() - b.finishAt.getTime());
    let applied = false;
    for (const task of due) {
      task.settled = true;
      if (task.error === null && task.apply) {
        task.apply();
        applied = true;
      }
    }
    return applied;
  }

  /** Tasks not finished yet (e.g. to see a name reserved by a create in flight). */
  running(): SimTaskView[] {
    this.settle();
    const now = this.clock();
    return this.pending.map((t) => this.view(t, now));
  }

  get(id: string): SimTaskView | undefined {
    this.settle();
    const record = this.tasks.get(id);
    return record ? this.view(record, this.clock()) : undefined;
  }

  private view(record: SimTaskRecord, now: Date): SimTaskView {
    const done = record.settled || record.finishAt.getTime() <= now.getTime();
    return {
      id: record.id,
      type: record.type,
      subject: record.subject ?? null,
      status: !done ? 'RUNNING' : record.error === null ? 'FINISHED' : 'ERROR',
      error: done ? record.error : null,
      projectId: record.projectId,
      regionId: record.regionId,
      createdAt: record.createdAt,
      finishedAt: done ? record.finishAt : null,
      createdResources: record.createdResources ?? null,
    };
  }
}
