import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { startSimulator } from '../simulator/index.js';
import { onShutdownSignal } from './signals.js';

/** `npm run sim`: the simulator alone, on SIM_PORT (default 8088), until SIGINT/SIGTERM. */
export async function simulate(config: Config, logger: Logger): Promise<'running'> {
  const sim = await startSimulator(config.simulator);
  const manifest = sim.manifest();
  logger.info(
    { url: sim.url, scopes: manifest.scopes.length, images: manifest.image_ids.length },
    'cloud API simulator listening',
  );
  // Printed plainly (not only logged) so a person can copy them; the key is the simulator's own.
  process.stdout.write(
    `\nSimulator base URL: ${sim.url}\nAPI key:            ${sim.apiKey}\n` +
      `Try:  curl -H 'Authorization: apikey ${sim.apiKey}' ${sim.url}/cloud/v1/keypairs/${manifest.scopes[0]?.project_id}/${manifest.scopes[0]?.region_id}\n` +
      `Manifest (scopes for a config file): ${sim.url}/_sim/manifest\n\n`,
  );
  onShutdownSignal(logger, async () => {
    await sim.close();
  });
  return 'running';
}
