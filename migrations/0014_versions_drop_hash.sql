ALTER TABLE "free_features_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "gpu_clusters_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "gpu_flavors_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "image_tags_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "instance_ports_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "instances_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "keypairs_versions" DROP COLUMN "hash";--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_versions" DROP COLUMN "hash";