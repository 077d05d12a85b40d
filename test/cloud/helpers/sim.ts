import { startSimulator, type Simulator, type SimulatorOptions } from '../../../src/simulator/index.js';
import { createCloudClient, type CloudClient, type CloudClientOptions } from '../../../src/cloud/index.js';

export interface SimHarness {
  sim: Simulator;
  client: CloudClient;
  /** A client of the same simulator with other options (closed with the harness). */
  clientWith(options: Partial<CloudClientOptions>): CloudClient;
  close(): Promise<void>;
}

/** A simulator with quick tasks and a client with quick retries, both closed by `close()`. */
export async function startHarness(
  simOptions: SimulatorOptions = {},
  clientOptions: Partial<CloudClientOptions> = {},
): Promise<SimHarness> {
  const sim = await startSimulator({ taskDelayMs: 30, ...simOptions });
  const clients: CloudClient[] = [];
  const clientWith = (options: Partial<CloudClientOptions>) => {
    const c = createCloudClient({
      baseUrl: sim.url,
      apiKey: sim.apiKey,
      retry: { baseDelayMs: 5, maxDelayMs: 2_000 },
      taskPoll: { intervalMs: 10, maxIntervalMs: 50, timeoutMs: 10_000 },
      ...clientOptions,
      ...options,
    });
    clients.push(c);
    return c;
  };
  const client = clientWith({});
  return {
    sim,
    client,
    clientWith,
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await sim.close();
    },
  };
}
