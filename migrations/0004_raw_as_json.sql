ALTER TABLE "free_features" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "gpu_clusters" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "gpu_flavors" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "image_tags" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "instance_ports" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "instances" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "keypairs" ALTER COLUMN "raw" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "storage_ssh_keys" ALTER COLUMN "raw" SET DATA TYPE json;