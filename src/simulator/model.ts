/**
 * The simulator's in-memory records. They hold what is needed to answer every endpoint; the wire
 * shapes (spec or legacy) are built from them on each read (wire/). Values that never change and
 * are cheap to derive (ports, volumes, addresses) are not stored: they come from the record's id.
 */

export interface SimTag {
  key: string;
  value: string;
  read_only: boolean;
}

export type InstanceStatus = 'ACTIVE' | 'SHUTOFF';

/** A virtual machine listed through its security groups, or a bare metal cluster server. */
export interface SimInstance {
  id: string;
  name: string;
  description: string;
  projectId: number;
  regionId: number;
  createdAt: Date;
  flavorName: string;
  status: InstanceStatus;
  tags: SimTag[];
  securityGroupIds: string[];
  sshKeyName: string | null;
  /** Position within its scope; derives the private address. */
  ordinal: number;
  /** Has a public address (and thus a DDoS profile that matters). */
  external: boolean;
  /** Set for bare metal cluster servers. */
  clusterId: string | null;
}

export interface SimSecurityGroup {
  id: string;
  name: string;
  projectId: number;
  regionId: number;
  instances: SimInstance[];
}

export type FlavorKind = 'baremetal' | 'vm';

export interface FlavorHardware {
  cpu: string;
  disk: string;
  ephemeral: string;
  gpu: string;
  network: string;
  ram: string;
}

/** A GPU flavor as listed in one scope (prices and capacity are per scope). */
export interface SimFlavor {
  name: string;
  kind: FlavorKind;
  resourceClass: string;
  vcpus: number;
  ramMiB: number;
  hardware: FlavorHardware;
  disabled: boolean;
  capacity: number;
  currency: string;
  /** Decimal text; null when the price is hidden (`price_status: "hide"`). */
  pricePerHour: string | null;
}

export interface SimInterface {
  type: string;
  network_id: string;
  subnet_id: string;
  port_id: string;
}

export interface SimCluster {
  id: string;
  name: string;
  projectId: number;
  regionId: number;
  createdAt: Date;
  creatorTaskId: string;
  /** The task holding the cluster, if any (e.g. a clean-up). */
  taskId: string | null;
  taskStatus: string | null;
  status: string;
  flavorName: string;
  imageId: string;
  interfaces: SimInterface[];
  password: string | null;
  userData: string | null;
  username: string | null;
  sshKeyName: string | null;
  tags: SimTag[];
  servers: SimInstance[];
}

export interface SimImage {
  id: string;
  name: string;
  tags: SimTag[];
}

export interface SimKeypair {
  id: string;
  name: string;
  projectId: number;
  regionId: number;
  publicKey: string;
  fingerprint: string;
  privateKey: string | null;
  sharedInProject: boolean;
  createdAt: Date;
}

export interface SimStorageKey {
  id: number;
  name: string;
  createdAt: Date;
}

export interface SimFreeFeature {
  id: number;
  clientId: number;
  featureId: number;
  name: string;
  service: string;
  isFree: boolean;
  createdAt: Date;
}

/** One line of a Kubernetes price estimate, in integer cents per hour. */
export interface SimPriceLine {
  /** Price before discount, in units of 0.0001 of the currency per hour. */
  baseHourUnits: number;
  discountPercent: number;
  taxPercent: number;
}

export interface SimK8sCluster {
  name: string;
  currency: string;
  instances: SimPriceLine[];
  publicips: SimPriceLine[];
  volumes: SimPriceLine[];
}

export interface SimListener {
  id: string;
  name: string;
  loadBalancerId: string;
  protocol: string;
  protocolPort: number;
  adminStateUp: boolean;
  allowedCidrs: string[];
  connectionLimit: number;
  creatorTaskId: string;
  insertHeaders: Record<string, string>;
  operatingStatus: string;
  provisioningStatus: string;
  poolCount: number;
  secretId: string | null;
  sniSecretIds: string[];
  timeoutClientData: number;
  timeoutMemberConnect: number;
  timeoutMemberData: number;
  users: Array<{ username: string; encrypted_password: string }>;
}

export interface SimLoadBalancer {
  id: string;
  name: string;
  flavor: string;
  createdAt: Date;
  tags: SimTag[];
  listeners: SimListener[];
}

export interface SimPool {
  id: string;
  name: string;
  protocol: string;
  lbAlgorithm: string;
  loadBalancerId: string | null;
  listenerId: string | null;
  memberCount: number;
  createdAt: Date;
}

export interface SimFaasNamespace {
  name: string;
  functions: Set<string>;
}

export interface SimVirtualCluster {
  id: string;
  name: string;
  flavor: string;
  serversCount: number;
  tags: SimTag[];
  createdAt: Date;
}

export interface SimInferenceDeployment {
  id: string;
  name: string;
  projectId: number;
  applicationName: string;
  regions: number[];
  components: string[];
  createdAt: Date;
}

export interface SimNetwork {
  networkId: string;
  subnetId: string;
  name: string;
  /** Second octet of the private range, e.g. 10.<octet>.x.y. */
  octet: number;
}

/** Everything that lives in one project + region pair. */
export interface SimScope {
  projectId: number;
  regionId: number;
  regionName: string;
  currency: string;
  networks: SimNetwork[];
  securityGroups: SimSecurityGroup[];
  /** The virtual machines of the scope (those listed through security groups), in a stable order. */
  instances: SimInstance[];
  flavors: SimFlavor[];
  clusters: SimCluster[];
  keypairs: SimKeypair[];
  k8sClusters: SimK8sCluster[];
  loadBalancers: SimLoadBalancer[];
  pools: SimPool[];
  faasNamespaces: SimFaasNamespace[];
  virtualClusters: SimVirtualCluster[];
  /** Next free ordinal for a new server or instance of the scope. */
  nextOrdinal: number;
}

export interface SimCompany {
  seed: number;
  size: number;
  clientId: number;
  projects: Array<{ id: number; name: string }>;
  scopes: SimScope[];
  images: SimImage[];
  storageKeys: SimStorageKey[];
  nextStorageKeyId: number;
  freeFeatures: SimFreeFeature[];
  inferenceDeployments: SimInferenceDeployment[];
}
