import { z } from 'zod';
import { fromLegacyCluster, fromLegacyInstance, fromLegacyKeypair, fromSingleObjectEnvelope } from './legacy.js';
import { decimalText, looseBool, looseInt, looseString, looseTimestamp, opaque } from './primitives.js';
import { TagListSchema, TagSchema } from './tags.js';

/**
 * Tolerant schemas for what the API answers. Every object keeps unknown fields (looseObject),
 * documented fields may be null or missing, numbers and booleans may come as strings, prices
 * are kept as exact decimal text. Only what makes a record useless (no identifier, not an object,
 * a wrong envelope) is rejected. Each `...Schema` parses the spec's shape; the exported
 * `...RecordSchema` variants first map the legacy field names (legacy.ts).
 *
 * The simulator produces `z.input<typeof XShapeSchema>` objects, so what it serves is checked
 * against the same shapes the client reads.
 */

const id = z.union([z.string().min(1), z.number().transform(String)], { error: 'expected an identifier' });
const looseArray = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v) => v ?? []);
const looseObj = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject(shape).nullish().transform((v) => v ?? null);

// ---- envelopes ---------------------------------------------------------------------------

export const TaskListSchema = z.looseObject({ tasks: z.array(z.string().min(1)) });
export type TaskList = z.output<typeof TaskListSchema>;

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.looseObject({
    count: looseInt.refine((n) => n === null || n >= 0, 'count must be >= 0'),
    results: z.array(item, { error: 'results must be an array' }),
    links: opaque.optional(),
  });
}

// ---- tasks -------------------------------------------------------------------------------

/**
 * A task. The spec does not show its fields; the provider reports progress in `state`
 * (NEW, RUNNING, FINISHED, ERROR) while the spec's wording says `status`: both are read.
 */
export const TaskSchema = z.looseObject({
  id: id,
  state: looseString,
  status: looseString,
  error: looseString,
  task_type: looseString,
  created_on: looseTimestamp,
  finished_on: looseTimestamp,
  created_resources: opaque.optional(),
});
export type Task = z.output<typeof TaskSchema>;
export type TaskWire = z.input<typeof TaskSchema>;
export const TASK_FINAL_STATES = ['FINISHED', 'ERROR'] as const;
/** The task's progress from `state` or `status`, upper-cased; null when neither is present. */
export function taskState(task: Pick<Task, 'state' | 'status'>): string | null {
  const s = task.state ?? task.status;
  return s === null ? null : s.toUpperCase();
}

// ---- instances and cluster servers -------------------------------------------------------

export const InstanceFlavorSchema = z.looseObject({
  flavor_id: looseString,
  flavor_name: looseString,
  architecture: looseString,
  os_type: looseString,
  ram: looseInt,
  vcpus: looseInt,
  hardware_description: z.record(z.string(), looseString).nullish().transform((v) => v ?? null),
  resource_class: looseString,
});

const ProfileFieldBase = {
  id: looseInt,
  name: looseString,
  description: looseString,
  required: looseBool,
  default: opaque.optional(),
  field_type: opaque.optional(),
  validation_schema: opaque.optional(),
};

export const DdosProfileSchema = z.looseObject({
  id: looseInt,
  site: looseString,
  options: looseObj({ active: looseBool, bgp: looseBool }),
  profile_template: looseObj({
    id: looseInt,
    name: looseString,
    description: looseString,
    fields: looseArray(z.looseObject(ProfileFieldBase)),
  }),
  profile_template_description: looseString,
  protocols: looseArray(z.looseObject({ port: looseString, protocols: looseArray(z.string()) })),
  status: looseObj({ status: looseString, error_description: looseString }),
  fields: looseArray(z.looseObject({ ...ProfileFieldBase, base_field: looseInt, field_value: opaque.optional() })),
});

export const InstanceShapeSchema = z.looseObject({
  id: id,
  name: looseString,
  instance_description: looseString,
  addresses: opaque.optional(),
  blackhole_ports: looseArray(
    z.looseObject({
      AlarmEnd: looseTimestamp,
      AlarmStart: looseTimestamp,
      AlarmState: looseString,
      AlertDuration: looseString,
      DestinationIP: looseString,
      ID: looseInt,
    }),
  ),
  created_at: looseTimestamp,
  creator_task_id: looseString,
  ddos_profile: DdosProfileSchema.nullish().transform((v) => v ?? null),
  fixed_ip_assignments: looseArray(
    z.looseObject({ external: looseBool, ip_address: looseString, subnet_id: looseString }),
  ),
  flavor: InstanceFlavorSchema.nullish().transform((v) => v ?? null),
  instance_isolation: looseObj({ reason: looseString }),
  project_id: looseInt,
  region_id: looseInt,
  region: looseString,
  security_groups: looseArray(z.looseObject({ name: looseString })),
  ssh_key_name: looseString,
  status: looseString,
  tags: TagListSchema,
  task_id: looseString,
  task_state: looseString,
  vm_state: looseString,
  volumes: looseArray(z.looseObject({ id: looseString, delete_on_termination: looseBool })),
});
export const InstanceRecordSchema = z.preprocess(fromLegacyInstance, InstanceShapeSchema);
export type Instance = z.output<typeof InstanceShapeSchema>;
export type InstanceWire = z.input<typeof InstanceShapeSchema>;

// ---- bare metal GPU clusters -------------------------------------------------------------

export const ClusterShapeSchema = z.looseObject({
  cluster_id: id,
  cluster_name: looseString,
  cluster_status: looseString,
  created_at: looseTimestamp,
  creator_task_id: looseString,
  flavor: looseString,
  image_id: looseString,
  image_name: looseString,
  interfaces: looseArray(
    z.looseObject({ network_id: looseString, port_id: looseString, subnet_id: looseString, type: looseString }),
  ),
  password: looseString,
  project_id: looseInt,
  region: looseString,
  region_id: looseInt,
  /** Missing servers read as an empty list: the record says nothing about them. */
  servers: looseArray(InstanceRecordSchema),
  ssh_key_name: looseString,
  tags: TagListSchema,
  task_id: looseString,
  task_status: looseString,
  user_data: looseString,
  username: looseString,
});
export const ClusterRecordSchema = z.preprocess(fromLegacyCluster, ClusterShapeSchema);
export type Cluster = z.output<typeof ClusterShapeSchema>;
/** What the simulator serves: servers as spec-shaped instance records. */
export type ClusterWire = Omit<z.input<typeof ClusterShapeSchema>, 'servers'> & { servers?: InstanceWire[] | null };

// ---- GPU flavors and prices --------------------------------------------------------------

export const GpuFlavorSchema = z.looseObject({
  flavor_id: id,
  flavor_name: looseString,
  disabled: looseBool,
  hardware_description: z.record(z.string(), looseString).nullish().transform((v) => v ?? null),
  capacity: looseInt,
  currency_code: looseString,
  price_per_hour: decimalText,
  price_per_month: decimalText,
  price_status: looseString,
  resource_class: looseString,
});
export type GpuFlavor = z.output<typeof GpuFlavorSchema>;
export type GpuFlavorWire = z.input<typeof GpuFlavorSchema>;

export const PriceItemSchema = z.looseObject({
  currency_code: looseString,
  discount_percent: decimalText,
  price_per_hour: decimalText,
  price_per_month: decimalText,
  price_status: looseString,
  price_without_discount_per_month: decimalText,
  tax_percent: decimalText,
});
export type PriceItem = z.output<typeof PriceItemSchema>;

export const PricingResultSchema = z.looseObject({
  instances: looseArray(PriceItemSchema),
  publicips: looseArray(PriceItemSchema),
  volumes: looseArray(PriceItemSchema),
  total_price: PriceItemSchema,
});
export type PricingResult = z.output<typeof PricingResultSchema>;
export type PricingResultWire = z.input<typeof PricingResultSchema>;

// ---- load balancing ----------------------------------------------------------------------

/** Listener record. The spec names the attributes but not their JSON names; these follow the provider's SDK. */
export const ListenerRecordSchema = z.looseObject({
  id: id,
  name: looseString,
  admin_state_up: looseBool,
  allowed_cidrs: looseArray(z.string()),
  connection_limit: looseInt,
  creator_task_id: looseString,
  insert_headers: opaque.optional(),
  loadbalancer_id: looseString,
  operating_status: looseString,
  pool_count: looseInt,
  protocol: looseString,
  protocol_port: looseInt,
  provisioning_status: looseString,
  secret_id: looseString,
  sni_secret_id: looseArray(z.string()),
  stats: looseObj({
    active_connections: looseInt,
    bytes_in: looseInt,
    bytes_out: looseInt,
    request_errors: looseInt,
    total_connections: looseInt,
  }),
  task_id: looseString,
  timeout_client_data: looseInt,
  timeout_member_connect: looseInt,
  timeout_member_data: looseInt,
  user_list: looseArray(z.looseObject({ username: looseString, encrypted_password: looseString })),
});
export type Listener = z.output<typeof ListenerRecordSchema>;
export type ListenerWire = z.input<typeof ListenerRecordSchema>;

// ---- images and keys ---------------------------------------------------------------------

export const ImageTagRecordSchema = TagSchema;

export const KeypairShapeSchema = z.looseObject({
  id: id,
  name: looseString,
  public_key: looseString,
  shared_in_project: looseBool,
  state: looseString,
  created_at: looseTimestamp,
  fingerprint: looseString,
  private_key: looseString,
  project_id: looseInt,
});
export const KeypairRecordSchema = z.preprocess(fromLegacyKeypair, KeypairShapeSchema);
export type Keypair = z.output<typeof KeypairShapeSchema>;
export type KeypairWire = z.input<typeof KeypairShapeSchema>;

export const StorageKeyRecordSchema = z.looseObject({
  id: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)], { error: 'expected an integer id' }),
  name: looseString,
  created_at: looseTimestamp,
});
export type StorageKey = z.output<typeof StorageKeyRecordSchema>;
export type StorageKeyWire = z.input<typeof StorageKeyRecordSchema>;

/** The storage key list answers `{data, meta}`, not the list envelope. */
export const StorageKeyListSchema = z.looseObject({
  data: z.array(StorageKeyRecordSchema, { error: 'data must be an array' }),
  meta: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}),
});
export type StorageKeyList = z.output<typeof StorageKeyListSchema>;

export const InstancePortRecordSchema = z.looseObject({
  id: id,
  name: looseString,
  security_groups: looseArray(z.looseObject({ id: looseString, name: looseString })),
});
export type InstancePort = z.output<typeof InstancePortRecordSchema>;
export type InstancePortWire = z.input<typeof InstancePortRecordSchema>;

export const FreeFeatureRecordSchema = z.looseObject({
  id: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)], { error: 'expected an integer id' }),
  client_id: looseInt,
  feature_id: looseInt,
  feature: looseObj({ id: looseInt, name: looseString, service: looseString, is_free: looseBool }),
  create_date: looseTimestamp,
});
export type FreeFeature = z.output<typeof FreeFeatureRecordSchema>;
export type FreeFeatureWire = z.input<typeof FreeFeatureRecordSchema>;

// ---- list responses ----------------------------------------------------------------------

export const ClusterListSchema = listEnvelope(ClusterRecordSchema);
export const InstanceListSchema = listEnvelope(InstanceRecordSchema);
/** Stop answers with the list envelope, or with a single instance object. */
export const StopInstanceResponseSchema = z.preprocess(fromSingleObjectEnvelope, InstanceListSchema);
export const GpuFlavorListSchema = listEnvelope(GpuFlavorSchema);
export const InstancePortListSchema = listEnvelope(InstancePortRecordSchema);
export const ImageTagListSchema = listEnvelope(ImageTagRecordSchema);
export const KeypairListSchema = listEnvelope(KeypairRecordSchema);
