import { afterEach, describe, expect, it } from 'vitest';
import { CloudTaskError, CloudTimeoutError, CloudValidationError, createCloudClient, type CloudClient } from '../../src/cloud/index.js';
import { sendJson, startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer | undefined;
let client: CloudClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

/** Serves tasks whose states advance by one step per poll along the given script. */
async function serveTasks(scripts: Record<string, Array<Record<string, unknown>>>): Promise<CloudClient> {
  const polls = new Map<string, number>();
  server = await startTestServer((req, res) => {
    const id = decodeURIComponent(req.url.split('/').pop()!);
    const script = scripts[id];
    if (!script) return sendJson(res, 404, { code: 'not_found', message: `task ${id}` });
    const n = polls.get(id) ?? 0;
    polls.set(id, n + 1);
    sendJson(res, 200, { id, ...script[Math.min(n, script.length - 1)] });
  });
  client = createCloudClient({
    baseUrl: server.url,
    apiKey: 'k-task-test',
    taskPoll: { intervalMs: 5, maxIntervalMs: 20, timeoutMs: 5_000 },
  });
  return client;
}

describe('waitForTasks', () => {
  it('polls GET /v1/tasks/{id} until every task is final and returns the records in order', async () => {
    const c = await serveTasks({
      a: [{ state: 'NEW' }, { state: 'RUNNING' }, { state: 'FINISHED', created_resources: { clusters: ['c1'] } }],
      b: [{ status: 'running' }, { status: 'finished' }], // the spec's word, any case
    });
    const tasks = await c.waitForTasks(['b', 'a']);
    expect(tasks.map((t) => t.id)).toEqual(['b', 'a']);
    expect(tasks[1]!.created_resources).toEqual({ clusters: ['c1'] });
    expect(server!.requests.every((r) => r.url.startsWith('/v1/tasks/'))).toBe(true);
    // Final tasks are not polled again: a 3 times, b twice.
    expect(server!.requests.filter((r) => r.url === '/v1/tasks/a')).toHaveLength(3);
    expect(server!.requests.filter((r) => r.url === '/v1/tasks/b')).toHaveLength(2);
  });

  it('throws CloudTaskError carrying every record when a task ends in ERROR', async () => {
    const c = await serveTasks({
      ok: [{ state: 'FINISHED' }],
      bad: [{ state: 'RUNNING' }, { state: 'ERROR', error: 'flavor nope-1 not found' }],
    });
    const err = await c.waitForTasks(['ok', 'bad']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudTaskError);
    const e = err as CloudTaskError;
    expect(e.tasks.map((t) => [t.id, t.state])).toEqual([
      ['ok', 'FINISHED'],
      ['bad', 'ERROR'],
    ]);
    expect(e.message).toContain('flavor nope-1 not found');
    expect(e.message).toContain('task bad ERROR');
    expect(e.path).toBe('/v1/tasks/bad');
  });

  it('throws CloudTimeoutError with the latest records at the deadline', async () => {
    const c = await serveTasks({ slow: [{ state: 'RUNNING' }] });
    const err = await c.waitForTasks(['slow'], { timeoutMs: 60 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect((err as CloudTimeoutError).timeoutMs).toBe(60);
    expect((err as CloudTimeoutError).tasks?.map((t) => t.state)).toEqual(['RUNNING']);
    expect((err as Error).message).toContain('slow: RUNNING');
  });

  it('validates the ids before polling', async () => {
    const c = await serveTasks({});
    await expect(c.waitForTasks(['ok', ''])).rejects.toBeInstanceOf(CloudValidationError);
    await expect(c.waitForTasks([])).resolves.toEqual([]);
    expect(server!.requests).toHaveLength(0);
  });
});
