#!/usr/bin/env node
/**
 * The command line: the only place (with src/config/load.ts) that touches the process: it loads
 * the configuration, builds the real logger, and hands them to the command.
 *
 *   start      the whole service (collections on schedules + web app)
 *   collect    one collection now, with progress and a summary; exit code says how it went
 *   simulate   the cloud API simulator alone
 *   migrate    apply database migrations and exit
 *   recompute-rollups   re-apply the current tag rules to kept snapshots and their cost rollups
 *   distribute   place the tables on a Citus coordinator (docs/scaling.md)
 *   hash-password   read a password on stdin, print its hash for the "users" of the config file
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config/index.js';
import { ListenHostError } from './auth/mode.js';
import { createLogger, type Logger } from './logger.js';
import { StartupError } from './ops/startup.js';

const USAGE = `Usage: cloudtally <command>

Commands:
  start      run the service: migrations, collections on schedules, web app on PORT (default 3000)
  collect    run one collection now and print a summary (exit 0 ok, 2 partial, 1 failed,
             3 another collection is running, 130/143 stopped by SIGINT/SIGTERM)
  simulate   run the cloud API simulator alone (SIM_PORT, default 8088; SIM_API_KEY)
  migrate    apply database migrations and exit
  recompute-rollups
             re-apply the configured tag rules (tag_aliases, tag_value_aliases, cases) to the
             kept snapshots' tags and cost rollups (exit 0 ok, 1 some snapshots failed: run it
             again, 75 a collection is running)
  distribute apply the migrations on a Citus coordinator (DATABASE_URL) and place every table
             as src/db/distribution.ts says; a second run changes nothing (exit 0 ok, 1 a table
             could not be placed, 2 not a Citus coordinator: nothing changed)

Exit codes of start-up problems: 78 configuration, 69 database unreachable, 70 migrations failed,
73 PORT cannot be bound, 75 the PGlite data folder is used by another process.

Configuration comes from the environment and the JSON file named by CLOUDTALLY_CONFIG;
see README.md and docs/production.md.`;

type Command = (config: Config, logger: Logger) => Promise<number | 'running'>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./commands/start.js')).start,
  collect: async () => (await import('./commands/collect.js')).collect,
  simulate: async () => (await import('./commands/simulate.js')).simulate,
  migrate: async () => (await import('./commands/migrate.js')).migrate,
  'recompute-rollups': async () => (await import('./commands/recompute-rollups.js')).recomputeRollupsCommand,
  distribute: async () => (await import('./commands/distribute.js')).distribute,
};

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  const name = positionals[0];
  if (values.help || !name) {
    process.stdout.write(`${USAGE}\n`);
    process.exitCode = name || values.help ? 0 : 64;
    return;
  }
  if (name === 'hash-password') {
    const { hashPasswordCommand } = await import('./commands/hash-password.js');
    process.exitCode = await hashPasswordCommand();
    return;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`Unknown command "${name}".\n\n${USAGE}\n`);
    process.exitCode = 64;
    return;
  }

  let config: Config;
  // Scheduled deliveries name a report and its parameters: checked against the reports at load.
  const { allReports } = await import('./reports/index.js');
  try {
    // No environment passed: the configuration reads the process's own (it alone does).
    config = loadConfig(undefined, { reports: allReports() });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 78; // EX_CONFIG
      return;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, pretty: process.stdout.isTTY === true });
  const command = await load();
  const result = await command(config, logger);
  if (result !== 'running') process.exitCode = result;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Start-up problems the operator must fix: a clear message and a meaningful exit code.
  if (error instanceof StartupError || error instanceof ListenHostError) {
    process.stderr.write(`cloudtally: ${error.message}\n`);
    process.exitCode = error instanceof StartupError ? error.exitCode : 78;
    return;
  }
  // Last resort: whatever escaped a command is printed with its context, never swallowed.
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`cloudtally: ${text}\n`);
  process.exitCode = 1;
});
