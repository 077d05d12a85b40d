/**
 * Loading: the environment variables plus an optional JSON file named by CLOUDTALLY_CONFIG,
 * validated once; every problem is reported together in one ConfigError; the result is
 * deep-frozen. The only place in src/ that reads process.env (as a default argument).
 *
 * Precedence: environment variables win over the file for scalar settings (retention); the
 * structured settings (scopes, schedules, tag aliases, client tuning) come from the file only.
 */
import { readFileSync } from 'node:fs';
import { normaliseTagKey, type TagRules } from '../tags/normalise.js';
import { parseSimulatorEnv } from '../simulator/options.js';
import { idleRuleSettings, notificationSettings } from './actions.js';
import { allocationSettings } from './allocation.js';
import { anomalySettings } from './anomalies.js';
import { authSettings, sessionSecretSetting, userSettings } from './auth.js';
import { budgetSettings } from './budgets.js';
import { cloudConfig, demoStateFile } from './cloud.js';
import { clientSettings, collectionRunSettings, scheduleSettings } from './collect.js';
import { databaseSessionSettings, databaseSettings, retentionSettings } from './database.js';
import { deliverySettings, type DeliverableReport } from './deliveries.js';
import { parseEnv, type Env } from './env.js';
import { FileSchema, type FileSettings } from './file-schema.js';
import { focusSettings } from './focus.js';
import { channelSettings, outboxSettings, smtpSettings } from './notify.js';
import { metricsSettings } from './ops.js';
import { oidcSettings } from './oidc.js';
import { ConfigError, zodProblems, type ConfigProblem } from './problems.js';
import { toScopes } from './scopes.js';
import { tagSettings } from './tag-rules.js';
import { deepFreeze, type Config, type ConfigShape } from './types.js';
import { webSettings } from './web.js';

export interface LoadConfigOptions {
  /** Reads the file named by CLOUDTALLY_CONFIG; defaults to fs.readFileSync(path, 'utf8'). */
  readFile?: (path: string) => string;
  /**
   * The reports `deliveries` may name: each delivery's report must be one of them and its params
   * valid for it. The command line passes every report; without it they are not checked here
   * (the delivery scheduler checks them again when it starts).
   */
  reports?: readonly DeliverableReport[];
  /** The host name of the default CLOUDTALLY_MAIL_FROM (default os.hostname()). */
  hostname?: string;
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  opts: LoadConfigOptions = {},
): Config {
  const problems: ConfigProblem[] = [];

  const { vars, invalid } = parseEnv(env, problems);

  const configFile = vars.CLOUDTALLY_CONFIG ?? null;
  let file: FileSettings | null = null;
  if (configFile !== null) {
    const loaded = readConfigFile(configFile, opts.readFile ?? ((p) => readFileSync(p, 'utf8')));
    if ('problem' in loaded) {
      problems.push(loaded.problem);
    } else {
      const fileResult = FileSchema.safeParse(loaded.value);
      if (fileResult.success) file = fileResult.data;
      else problems.push(...zodProblems(fileResult.error));
    }
  } else {
    file = FileSchema.parse({});
  }

  const simulator = parseSimulatorEnv(env);
  problems.push(...simulator.problems);
  const cloud = cloudConfig(vars, invalid, problems);
  const scopes = file ? toScopes(file.scopes, problems, 'scopes') : [];
  if (cloud?.mode === 'remote' && file && scopes.length === 0) {
    problems.push({
      path: 'scopes',
      message:
        'at least one scope (project_id, region_id) is required with CLOUDTALLY_API_URL: the API has no endpoint that lists projects and regions',
    });
  }
  const tags = tagSettings(file, problems);
  const retention = retentionSettings(vars, file, problems);
  const database = databaseSettings(vars, problems);
  const collectionRuns = collectionRunSettings(vars, problems);

  const budgets = file?.budgets ? budgetSettings(file.budgets, tags, problems) : null;
  const allocation = file ? allocationSettings(file.allocation, configFile === null && cloud?.mode === 'simulator', tags, problems) : [];

  const metrics = metricsSettings(vars, invalid, file?.metrics, problems);
  const anomalies = file ? anomalySettings(file.anomalies, tags, file.channels, problems) : null;
  const web = webSettings(vars, file?.auth.proxy?.trusted_addresses ?? [], problems);
  const actions = file ? actionSettings(file, vars, env, web.publicUrl, tags, problems) : null;
  const notify = file ? notifySettings(file, vars, env, invalid, opts, problems, tags) : null;

  if (problems.length > 0 || !cloud || !file || !actions || !notify || !anomalies) {
    throw new ConfigError(problems);
  }

  const config: ConfigShape = {
    cloud,
    ...database,
    databaseSessions: databaseSessionSettings(vars),
    server: { host: vars.HOST ?? '127.0.0.1', port: vars.PORT ?? 3000 },
    web,
    logLevel: vars.LOG_LEVEL ?? 'info',
    ...retention,
    costMaxGapHours: vars.CLOUDTALLY_COST_MAX_GAP_HOURS ?? file.cost_max_gap_hours ?? null,
    simulator: simulator.options,
    demoStateFile: demoStateFile(vars.CLOUDTALLY_DATA_DIR ?? './data'),
    scopes,
    imageIds: file.image_ids,
    freeFeatureIds: file.free_feature_ids,
    schedules: scheduleSettings(file.schedules),
    ...tags,
    focus: focusSettings(file.focus),
    budgets: budgets ?? null,
    anomalies,
    allocation,
    client: clientSettings(file.client),
    collectOnStart: file.collect_on_start,
    collectionRuns,
    ...actions,
    ...notify,
    metrics,
    configFile,
  };
  return deepFreeze(config);
}

type ActionSettings = Pick<ConfigShape, 'users' | 'auth' | 'idleRules' | 'notifications' | 'stopGraceHours' | 'ownerTagKey'>;

/** Users, sign-in, idle rules and notifications; tag keys normalised like the collected tags. */
function actionSettings(
  file: FileSettings,
  vars: Env,
  env: Record<string, string | undefined>,
  publicUrl: string | null,
  tags: TagRules,
  problems: ConfigProblem[],
): ActionSettings {
  const users = userSettings(file.users, problems, tags);
  const sessionSecret = sessionSecretSetting(vars.CLOUDTALLY_SESSION_SECRET ?? null, users.length > 0 || file.auth.oidc !== null, problems);
  const notifications = notificationSettings(file.notifications, vars.CLOUDTALLY_WEBHOOK_URL, problems);
  const oidc = file.auth.oidc ? oidcSettings(file.auth.oidc, env, publicUrl, tags, problems) : null;
  const auth = authSettings(file.auth, sessionSecret, oidc, problems, tags);
  return {
    users,
    auth,
    idleRules: idleRuleSettings(file.idle_rules, tags),
    notifications,
    stopGraceHours: file.stop_grace_hours,
    ownerTagKey: normaliseTagKey(file.owner_tag_key, tags),
  };
}

type NotifySettings = Pick<ConfigShape, 'channels' | 'smtp' | 'outbox' | 'deliveries'>;

/** Channels, the SMTP server and sender, the outbox's retries, and the scheduled deliveries. */
function notifySettings(
  file: FileSettings,
  vars: Env,
  env: Record<string, string | undefined>,
  invalid: Set<string>,
  opts: LoadConfigOptions,
  problems: ConfigProblem[],
  tags: TagRules,
): NotifySettings {
  const smtp = smtpSettings(vars, opts.hostname, problems);
  const channels = channelSettings(file.channels, smtp, invalid.has('CLOUDTALLY_SMTP_URL'), env, problems);
  const deliveries = deliverySettings(file.deliveries, channels, opts.reports, problems, tags);
  return { channels, smtp, outbox: outboxSettings(file.outbox), deliveries };
}

function readConfigFile(
  path: string,
  readFile: (path: string) => string,
): { value: unknown } | { problem: ConfigProblem } {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: { path: 'CLOUDTALLY_CONFIG', message: `cannot read ${JSON.stringify(path)} (${code ?? (err as Error).message})` } };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { problem: { path: 'CLOUDTALLY_CONFIG', message: `${JSON.stringify(path)} is not valid JSON (${(err as Error).message})` } };
  }
}
