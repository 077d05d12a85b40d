import type { FlavorHardware, FlavorKind } from './model.js';

/**
 * The fixed layout of the demo company: projects, regions, scopes and the flavor catalog. Ids here
 * do not depend on the seed, so a demo configuration can name them; everything else (UUIDs, names,
 * tags, capacity) comes from the seed.
 */

export interface RegionSpec {
  id: number;
  name: string;
  currency: string;
  /** Price level of the region in percent of the catalog's base price. */
  pricePercent: number;
}

export const REGIONS: readonly RegionSpec[] = [
  { id: 38, name: 'Frankfurt-1', currency: 'EUR', pricePercent: 100 },
  { id: 76, name: 'Luxembourg-2', currency: 'EUR', pricePercent: 96 },
  { id: 120, name: 'Manassas-1', currency: 'USD', pricePercent: 109 },
];

export const PROJECTS: ReadonlyArray<{ id: number; name: string }> = [
  { id: 380101, name: 'ml-research' },
  { id: 380102, name: 'platform' },
  { id: 380103, name: 'analytics' },
];

/** Scopes and their share of the company's instances (weights sum to 100). */
export const SCOPE_LAYOUT: ReadonlyArray<{ projectId: number; regionId: number; weight: number }> = [
  { projectId: 380101, regionId: 76, weight: 30 },
  { projectId: 380101, regionId: 38, weight: 15 },
  { projectId: 380102, regionId: 76, weight: 25 },
  { projectId: 380102, regionId: 120, weight: 20 },
  { projectId: 380103, regionId: 120, weight: 10 },
];

export const CLIENT_ID = 284113;

export interface FlavorSpec {
  name: string;
  kind: FlavorKind;
  resourceClass: string;
  vcpus: number;
  ramMiB: number;
  hardware: FlavorHardware;
  /** Base price in cents per hour; null = price hidden. */
  hourCents: number | null;
  disabled: boolean;
}

const BM_CPU = '2x Intel Xeon Platinum 8480+';
const BM_NET = '2x100G Ethernet, 8x400G InfiniBand';

/** GPU flavors listed in every scope (prices scaled by the region). */
export const GPU_FLAVORS: readonly FlavorSpec[] = [
  {
    name: 'bm3-ai-1xlarge-h100-80-8',
    kind: 'baremetal',
    resourceClass: 'bm3-ai-1xlarge-h100-80-8',
    vcpus: 224,
    ramMiB: 2_097_152,
    hardware: { cpu: BM_CPU, disk: '2x960GB NVMe', ephemeral: '8x3.84TB NVMe', gpu: '8x Nvidia H100 80GB', network: BM_NET, ram: '2TB DDR5' },
    hourCents: 2560,
    disabled: false,
  },
  {
    name: 'bm3-ai-1xlarge-h200-141-8',
    kind: 'baremetal',
    resourceClass: 'bm3-ai-1xlarge-h200-141-8',
    vcpus: 224,
    ramMiB: 2_097_152,
    hardware: { cpu: BM_CPU, disk: '2x960GB NVMe', ephemeral: '8x7.68TB NVMe', gpu: '8x Nvidia H200 141GB', network: BM_NET, ram: '2TB DDR5' },
    hourCents: 3290,
    disabled: false,
  },
  {
    name: 'bm2-ai-1xlarge-a100-80-8',
    kind: 'baremetal',
    resourceClass: 'bm2-ai-1xlarge-a100-80-8',
    vcpus: 128,
    ramMiB: 1_048_576,
    hardware: { cpu: '2x AMD EPYC 7763', disk: '2x960GB SSD', ephemeral: '4x3.84TB NVMe', gpu: '8x Nvidia A100 80GB', network: '2x100G Ethernet, 8x200G InfiniBand', ram: '1TB DDR4' },
    hourCents: 1450,
    disabled: false,
  },
  {
    name: 'bm1-ai-large-v100-32-8',
    kind: 'baremetal',
    resourceClass: 'bm1-ai-large-v100-32-8',
    vcpus: 80,
    ramMiB: 786_432,
    hardware: { cpu: '2x Intel Xeon Gold 6248', disk: '2x480GB SSD', ephemeral: '2x1.92TB SSD', gpu: '8x Nvidia V100 32GB', network: '2x25G Ethernet', ram: '768GB DDR4' },
    hourCents: 620,
    disabled: true,
  },
  {
    name: 'g3-ai-16-232-1600-l40s-48-1',
    kind: 'vm',
    resourceClass: 'vm-gpu-l40s',
    vcpus: 16,
    ramMiB: 237_568,
    hardware: { cpu: '16 vCPU', disk: '1600GB NVMe', ephemeral: '0', gpu: '1x Nvidia L40S 48GB', network: '2x25G', ram: '232GB' },
    hourCents: 172,
    disabled: false,
  },
  {
    name: 'g3-ai-32-464-3200-l40s-48-2',
    kind: 'vm',
    resourceClass: 'vm-gpu-l40s',
    vcpus: 32,
    ramMiB: 475_136,
    hardware: { cpu: '32 vCPU', disk: '3200GB NVMe', ephemeral: '0', gpu: '2x Nvidia L40S 48GB', network: '2x25G', ram: '464GB' },
    hourCents: 344,
    disabled: false,
  },
  {
    name: 'g3-ai-24-256-1600-h100-80-1',
    kind: 'vm',
    resourceClass: 'vm-gpu-h100',
    vcpus: 24,
    ramMiB: 262_144,
    hardware: { cpu: '24 vCPU', disk: '1600GB NVMe', ephemeral: '0', gpu: '1x Nvidia H100 80GB', network: '2x100G', ram: '256GB' },
    hourCents: 310,
    disabled: false,
  },
  {
    name: 'g2-ai-12-120-800-a100-80-1',
    kind: 'vm',
    resourceClass: 'vm-gpu-a100',
    vcpus: 12,
    ramMiB: 122_880,
    hardware: { cpu: '12 vCPU', disk: '800GB SSD', ephemeral: '0', gpu: '1x Nvidia A100 80GB', network: '2x25G', ram: '120GB' },
    hourCents: 245,
    disabled: false,
  },
  {
    name: 'g3-ai-64-928-6400-l40s-48-4',
    kind: 'vm',
    resourceClass: 'vm-gpu-l40s',
    vcpus: 64,
    ramMiB: 950_272,
    hardware: { cpu: '64 vCPU', disk: '6400GB NVMe', ephemeral: '0', gpu: '4x Nvidia L40S 48GB', network: '2x25G', ram: '928GB' },
    hourCents: null,
    disabled: false,
  },
];

/** CPU flavors some instances use; they are not in the GPU flavor list, so they have no price. */
export const CPU_FLAVORS: ReadonlyArray<{ name: string; vcpus: number; ramMiB: number }> = [
  { name: 'g1-standard-4-8', vcpus: 4, ramMiB: 8192 },
  { name: 'g1-standard-8-16', vcpus: 8, ramMiB: 16384 },
];

/** Load balancer flavors a create may name. */
export const LB_FLAVORS: readonly string[] = ['lb1-1-2', 'lb1-2-4', 'lb1-4-8', 'lb1-8-16'];

/** Applications of the inference catalog. */
export const INFERENCE_APPLICATIONS: readonly string[] = [
  'llama-3-1-8b-instruct',
  'mistral-7b-instruct',
  'qwen2-5-7b-instruct',
  'whisper-large-v3',
  'stable-diffusion-xl',
];

export const FREE_FEATURE_CATALOG: ReadonlyArray<{ id: number; name: string; service: string }> = [
  { id: 1, name: 'Image Stack', service: 'CDN' },
  { id: 2, name: 'Origin Shielding', service: 'CDN' },
  { id: 3, name: 'Large Files Optimization', service: 'CDN' },
  { id: 4, name: 'Brotli Compression', service: 'CDN' },
  { id: 5, name: 'Raw Logs', service: 'CDN' },
  { id: 6, name: 'WAF Basic', service: 'WAAP' },
];

export const IMAGE_NAMES: readonly string[] = [
  'ubuntu-22.04-x64-nvidia-535',
  'ubuntu-24.04-x64-nvidia-550',
  'rocky-9.4-x64-nvidia-550',
  'ubuntu-22.04-x64-nvidia-535-ib',
  'debian-12-x64-nvidia-550',
];

export const K8S_CLUSTER_NAMES: readonly string[] = ['k8s-prod-ml', 'k8s-staging', 'k8s-inference', 'k8s-dev-sandbox', 'k8s-batch'];

export const SECURITY_GROUP_NAMES: readonly string[] = [
  'default',
  'gpu-workers',
  'ssh-bastion',
  'web-public',
  'ml-training',
  'internal-db',
];

export const FAAS_NAMESPACES: readonly string[] = ['prod', 'ml-hooks', 'etl-jobs'];
export const FAAS_FUNCTIONS: readonly string[] = ['resize-image', 'notify-slack', 'score-model', 'ingest-events', 'cleanup-tmp'];

export const KEYPAIR_NAMES: readonly string[] = [
  'alice-laptop',
  'ci-deploy',
  'bob-ed25519',
  'chen-workstation',
  'ops-bastion',
  'dana-rsa',
];
