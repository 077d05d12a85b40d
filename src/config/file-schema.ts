/**
 * The JSON file named by CLOUDTALLY_CONFIG: every top-level setting, each section's schema from its
 * own module. An unknown key is a problem; so is a bad value, each named by its path.
 */
import { z } from 'zod';
import { IdleRulesSchema, NotificationsSchema } from './actions.js';
import { AllocationRulesSchema } from './allocation.js';
import { AnomaliesSchema } from './anomalies.js';
import { AuthSchema, UserSchema } from './auth.js';
import { BudgetSchema } from './budgets.js';
import { ClientSchema, SchedulesSchema } from './collect.js';
import { DeliverySchema } from './deliveries.js';
import { FocusSchema } from './focus.js';
import { ChannelSchema, OutboxSchema } from './notify.js';
import { MetricsFileSchema } from './ops.js';
import { ScopeSchema } from './scopes.js';
import { TagAliasesSchema, TagCaseSchema, TagValueAliasesSchema } from './tag-rules.js';
import { nonEmptyName, positiveInt } from './validators.js';

export const FileSchema = z.strictObject({
  scopes: z.array(ScopeSchema).default([]),
  image_ids: z.array(nonEmptyName).default([]),
  free_feature_ids: z.array(positiveInt).default([]),
  schedules: SchedulesSchema.default({}),
  retention_days: z.int().min(1).max(3650).optional(),
  retention_hourly_days: z.int().min(1).max(3650).optional(),
  cost_max_gap_hours: z.int().min(1).max(744).optional(),
  tag_aliases: TagAliasesSchema.default({}),
  tag_key_case: TagCaseSchema.default('lower'),
  tag_value_case: TagCaseSchema.default('preserve'),
  tag_value_aliases: TagValueAliasesSchema.default({}),
  focus: FocusSchema.prefault({}),
  budgets: z.array(BudgetSchema).optional(),
  anomalies: AnomaliesSchema.prefault({}),
  allocation: AllocationRulesSchema.optional(),
  client: ClientSchema.prefault({}),
  collect_on_start: z.boolean().default(true),
  users: z.array(UserSchema).default([]),
  auth: AuthSchema.prefault({}),
  idle_rules: IdleRulesSchema.prefault({}),
  notifications: NotificationsSchema.nullable().default(null),
  channels: z.array(ChannelSchema).default([]),
  outbox: OutboxSchema.prefault({}),
  deliveries: z.array(DeliverySchema).default([]),
  stop_grace_hours: z.number().min(0).max(24 * 30).default(24),
  owner_tag_key: nonEmptyName.default('owner'),
  metrics: MetricsFileSchema.prefault({}),
});
export type FileSettings = z.infer<typeof FileSchema>;
