import { redactDatabaseUrl } from '../db/url.js';
import type { Config, ConfigShape } from './types.js';

/** A copy safe to log: API keys and the database password replaced. */
export function describeConfig(config: Config): Config {
  const copy = structuredClone(config) as ConfigShape;
  if (copy.cloud.mode === 'remote') copy.cloud.apiKey = '[redacted]';
  if (copy.database.driver === 'pg') copy.database.url = redactDatabaseUrl(copy.database.url);
  if (copy.databaseReadUrl) copy.databaseReadUrl = redactDatabaseUrl(copy.databaseReadUrl);
  if (copy.simulator.apiKey !== undefined) copy.simulator.apiKey = '[redacted]';
  for (const user of copy.users) user.passwordHash = '[redacted]';
  if (copy.auth.sessionSecret !== null) copy.auth.sessionSecret = '[redacted]';
  if (copy.auth.oidc) copy.auth.oidc.clientSecret = '[redacted]';
  if (copy.notifications) copy.notifications.webhookUrl = '[redacted]';
  if (copy.metrics.token !== null) copy.metrics.token = '[redacted]';
  for (const channel of copy.channels) {
    if (channel.type === 'webhook') {
      channel.url = '[redacted]';
      if (channel.secret !== null) channel.secret = '[redacted]';
    }
  }
  if (copy.smtp) copy.smtp.url = '[redacted]';
  return copy;
}
