CREATE INDEX "free_features_versions_started_idx" ON "free_features_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "gpu_cluster_servers_versions_started_idx" ON "gpu_cluster_servers_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "gpu_clusters_versions_started_idx" ON "gpu_clusters_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "gpu_flavors_versions_started_idx" ON "gpu_flavors_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "image_tags_versions_started_idx" ON "image_tags_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "instance_ports_versions_started_idx" ON "instance_ports_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "instances_versions_started_idx" ON "instances_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "k8s_cluster_prices_versions_started_idx" ON "k8s_cluster_prices_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "keypairs_versions_started_idx" ON "keypairs_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));--> statement-breakpoint
CREATE INDEX "storage_ssh_keys_versions_started_idx" ON "storage_ssh_keys_versions" USING btree ("scope_key",("valid_from" at time zone 'UTC'));