/** The actions on instances: the idle rules, scheduled stops and their notices by webhook. */
import { z } from 'zod';
import { normaliseTagKey, type TagRules } from '../tags/normalise.js';
import { literalPrivateHost, privateDestinationProblem } from './destinations.js';
import type { ConfigProblem } from './problems.js';
import type { IdleRulesSettings, NotificationSettings } from './types.js';
import { hasProtocol, nonEmptyName } from './validators.js';

const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be HH:MM (24 h)' });

export const IdleRulesSchema = z.strictObject({
  no_owner: z
    .strictObject({ enabled: z.boolean().default(true), min_running_days: z.int().min(0).max(3650).default(30) })
    .prefault({}),
  expired: z.strictObject({ enabled: z.boolean().default(true), tag_key: nonEmptyName.default('expires') }).prefault({}),
  off_hours: z
    .strictObject({
      enabled: z.boolean().default(true),
      tag_key: nonEmptyName.default('env'),
      values: z.array(nonEmptyName).min(1).default(['dev', 'test', 'sandbox']),
      timezone: z
        .string()
        .default('UTC')
        .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Berlin or UTC' }),
      working_hours: z
        .strictObject({ start: clockTime.default('08:00'), end: clockTime.default('20:00') })
        .prefault({})
        .refine((h) => h.start < h.end, { error: 'start must be before end' }),
      working_days: z.array(z.int().min(1).max(7)).default([1, 2, 3, 4, 5]),
    })
    .prefault({}),
  quarantine: z.strictObject({ enabled: z.boolean().default(true), security_groups: z.array(nonEmptyName).default([]) }).prefault({}),
  cluster_clean_up: z
    .strictObject({ enabled: z.boolean().default(true), task_statuses: z.array(nonEmptyName).default(['CLUSTER_CLEAN_UP']) })
    .prefault({}),
});

export const NotificationsSchema = z.strictObject({
  /** Optional here when CLOUDTALLY_WEBHOOK_URL gives it (a webhook URL is a secret). */
  webhook_url: z
    .string()
    .refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' })
    .optional(),
  timeout_ms: z.int().min(100).max(60_000).default(5_000),
  retries: z.int().min(0).max(10).default(2),
  app_url: z
    .string()
    .refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' })
    .transform((s) => s.replace(/\/+$/, ''))
    .nullable()
    .default(null),
  // Private, loopback, link-local ... webhook addresses are refused without it (config/destinations.ts).
  allow_private_network: z.boolean().default(false),
});

/** The notices' webhook: CLOUDTALLY_WEBHOOK_URL or the file's `notifications`; none without either. */
export function notificationSettings(
  raw: z.output<typeof NotificationsSchema> | null,
  envWebhookUrl: string | undefined,
  problems: ConfigProblem[],
): NotificationSettings | null {
  const webhookUrl = envWebhookUrl ?? raw?.webhook_url;
  if (webhookUrl) {
    const allowPrivateNetwork = raw?.allow_private_network ?? false;
    const kind = allowPrivateNetwork ? null : literalPrivateHost(webhookUrl);
    if (kind) {
      const path = envWebhookUrl !== undefined ? 'CLOUDTALLY_WEBHOOK_URL' : 'notifications.webhook_url';
      problems.push({ path, message: privateDestinationProblem('its host', kind, '"notifications"') });
    }
    return { webhookUrl, timeoutMs: raw?.timeout_ms ?? 5_000, retries: raw?.retries ?? 2, appUrl: raw?.app_url ?? null, allowPrivateNetwork };
  }
  if (raw) problems.push({ path: 'notifications.webhook_url', message: 'is required (or set CLOUDTALLY_WEBHOOK_URL); use "notifications": null for none' });
  return null;
}

/** The idle rules, their tag keys normalised like the collected tags. */
export function idleRuleSettings(rules: z.output<typeof IdleRulesSchema>, tags: Pick<TagRules, 'tagAliases' | 'tagKeyCase'>): IdleRulesSettings {
  const key = (k: string) => normaliseTagKey(k, tags);
  return {
    noOwner: { enabled: rules.no_owner.enabled, minRunningDays: rules.no_owner.min_running_days },
    expired: { enabled: rules.expired.enabled, tagKey: key(rules.expired.tag_key) },
    offHours: {
      enabled: rules.off_hours.enabled,
      tagKey: key(rules.off_hours.tag_key),
      values: [...new Set(rules.off_hours.values.map((v) => v.toLowerCase()))],
      timezone: rules.off_hours.timezone,
      workingHours: { ...rules.off_hours.working_hours },
      workingDays: [...new Set(rules.off_hours.working_days)].sort((a, b) => a - b),
    },
    quarantine: { enabled: rules.quarantine.enabled, securityGroups: [...new Set(rules.quarantine.security_groups)] },
    clusterCleanUp: { enabled: rules.cluster_clean_up.enabled, taskStatuses: [...new Set(rules.cluster_clean_up.task_statuses)] },
  };
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
