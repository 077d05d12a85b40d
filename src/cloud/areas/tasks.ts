import { z } from 'zod';
import { PathIdSchema, TASK_FINAL_STATES, TaskSchema, taskState, type Task } from '../schemas/index.js';
import { sleep } from '../backoff.js';
import { decodeWith, rememberRecord } from '../decode.js';
import { CloudTaskError, CloudTimeoutError, type RequestIdentity } from '../errors.js';
import type { Transport } from '../http.js';
import { endpointOf, fillPath, ROUTES } from '../paths.js';
import { InputCheck } from '../validate.js';

export interface TaskPollSettings {
  /** First wait between two polls. */
  intervalMs: number;
  /** The wait grows by half each round up to this. */
  maxIntervalMs: number;
  /** Deadline for the whole wait. */
  timeoutMs: number;
}

export type WaitForTasksOptions = Partial<TaskPollSettings>;

/** Asynchronous operations' tasks. */
export interface TaskApi {
  /** `GET /v1/tasks/{task_id}`: the task's current record (progress in `state` or `status`; see `taskState`). */
  getTask(task_id: string): Promise<Task>;
  /**
   * Polls every task (with a growing interval) until all are FINISHED or ERROR, and returns their
   * final records in the order asked. Throws CloudTaskError (carrying every record) when any
   * ended in ERROR, CloudTimeoutError (carrying the latest records) at the deadline.
   */
  waitForTasks(task_ids: readonly string[], options?: WaitForTasksOptions): Promise<Task[]>;
}

const BACKOFF_FACTOR = 1.5;
const TaskIdsSchema = z.array(PathIdSchema, { error: 'must be an array of task ids' });
const PollSettingsSchema = z.strictObject({
  intervalMs: z.int().min(1, 'must be at least 1').optional(),
  maxIntervalMs: z.int().min(1, 'must be at least 1').optional(),
  timeoutMs: z.int().min(0, 'must be at least 0').optional(),
});

function isFinal(task: Task): boolean {
  return (TASK_FINAL_STATES as readonly string[]).includes(taskState(task) ?? '');
}

export function taskApi(transport: Transport, defaults: TaskPollSettings): TaskApi {
  const route = ROUTES.getTask;

  const fetchTask = (operation: string, task_id: string): Promise<Task> =>
    transport.send({
      operation,
      route,
      params: { task_id },
      idempotent: true,
      decode: decodeWith(TaskSchema, rememberRecord),
    });

  const identity = (task_id: string): RequestIdentity => ({
    operation: 'waitForTasks',
    method: route.method,
    path: fillPath(route.template, { task_id }),
    endpoint: endpointOf(route),
  });

  return {
    async getTask(task_id) {
      const input = new InputCheck('getTask', route);
      const id = input.check('path.task_id', PathIdSchema, task_id);
      input.done();
      return fetchTask('getTask', id);
    },

    async waitForTasks(task_ids, options = {}) {
      const input = new InputCheck('waitForTasks', route);
      const ids = input.check('path.task_id', TaskIdsSchema, task_ids);
      const overrides = input.check('options', PollSettingsSchema, options);
      input.done();
      const settings: TaskPollSettings = {
        intervalMs: overrides.intervalMs ?? defaults.intervalMs,
        maxIntervalMs: overrides.maxIntervalMs ?? defaults.maxIntervalMs,
        timeoutMs: overrides.timeoutMs ?? defaults.timeoutMs,
      };
      const deadline = Date.now() + settings.timeoutMs;
      const latest = new Map<string, Task>();
      let intervalMs = settings.intervalMs;

      for (;;) {
        const pending = [...new Set(ids)].filter((id) => !(latest.has(id) && isFinal(latest.get(id)!)));
        const records = await Promise.all(pending.map((id) => fetchTask('waitForTasks', id)));
        pending.forEach((id, i) => latest.set(id, records[i]!));
        const tasks = ids.map((id) => latest.get(id)!);

        const stillPending = tasks.filter((t) => !isFinal(t));
        if (stillPending.length === 0) {
          const failed = tasks.filter((t) => taskState(t) === 'ERROR');
          if (failed.length > 0) throw new CloudTaskError(identity(failed[0]!.id), tasks, failed);
          return tasks;
        }

        const remainingMs = deadline - Date.now();
        if (remainingMs <= 0) {
          const states = stillPending.map((t) => `${t.id}: ${taskState(t) ?? 'no state'}`).join(', ');
          throw new CloudTimeoutError(identity(stillPending[0]!.id), {
            timeoutMs: settings.timeoutMs,
            attempts: 1,
            what: `still waiting for ${stillPending.length} of ${tasks.length} task(s) (${states})`,
            tasks,
          });
        }
        await sleep(Math.min(intervalMs, remainingMs));
        intervalMs = Math.min(settings.maxIntervalMs, Math.ceil(intervalMs * BACKOFF_FACTOR));
      }
    },
  };
}
