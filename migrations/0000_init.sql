CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`scopes` text NOT NULL,
	`rate_limit_requests` integer,
	`rate_limit_period_seconds` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_company_idx` ON `api_keys` (`company_id`);--> statement-breakpoint
CREATE TABLE `companies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`timezone` text NOT NULL,
	`webhook_secret` text NOT NULL,
	`previous_webhook_secret` text,
	`previous_webhook_secret_expires_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `machines` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`uuid` text,
	`name` text NOT NULL,
	`external_name` text,
	`is_count_enabled` integer DEFAULT true NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `machines_uuid_unique` ON `machines` (`uuid`);--> statement-breakpoint
CREATE INDEX `machines_company_idx` ON `machines` (`company_id`,`id`);--> statement-breakpoint
CREATE TABLE `nominal_speeds` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`sku_id` text NOT NULL,
	`nominal_speed` real NOT NULL,
	`counting_factor` real DEFAULT 1 NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`sku_id`) REFERENCES `skus`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nominal_speeds_active_pair_unique` ON `nominal_speeds` (`company_id`,`machine_id`,`sku_id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE TABLE `operators` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`first_name` text,
	`last_name` text,
	`email` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `operators_company_idx` ON `operators` (`company_id`);--> statement-breakpoint
CREATE TABLE `production_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`sku_id` text,
	`shift_instance_id` integer,
	`operator_id` integer,
	`work_order_id` text,
	`simple_work_order_id` text,
	`type` text DEFAULT 'total' NOT NULL,
	`count` integer NOT NULL,
	`sensor_count` integer NOT NULL,
	`nominal_speed` real NOT NULL,
	`counting_factor` real DEFAULT 1 NOT NULL,
	`start` integer NOT NULL,
	`end` integer NOT NULL,
	`is_reviewed` integer DEFAULT false NOT NULL,
	`is_automated` integer DEFAULT false NOT NULL,
	`live` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`sku_id`) REFERENCES `skus`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`shift_instance_id`) REFERENCES `shift_instances`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `production_logs_company_start_idx` ON `production_logs` (`company_id`,`start`,`id`);--> statement-breakpoint
CREATE INDEX `production_logs_machine_start_idx` ON `production_logs` (`machine_id`,`start`);--> statement-breakpoint
CREATE INDEX `production_logs_shift_instance_idx` ON `production_logs` (`shift_instance_id`);--> statement-breakpoint
CREATE TABLE `shift_definition_machines` (
	`shift_definition_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`shift_definition_id`, `machine_id`),
	FOREIGN KEY (`shift_definition_id`) REFERENCES `shift_definitions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `shift_definitions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`start_time` text NOT NULL,
	`end_time` text NOT NULL,
	`weekdays` text NOT NULL,
	`is_considered` integer DEFAULT true NOT NULL,
	`all_machines` integer DEFAULT true NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `shift_definitions_company_idx` ON `shift_definitions` (`company_id`);--> statement-breakpoint
CREATE TABLE `shift_instances` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`shift_definition_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`start` integer NOT NULL,
	`end` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`shift_definition_id`) REFERENCES `shift_definitions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shift_instances_definition_machine_start_unique` ON `shift_instances` (`shift_definition_id`,`machine_id`,`start`);--> statement-breakpoint
CREATE INDEX `shift_instances_company_start_idx` ON `shift_instances` (`company_id`,`start`);--> statement-breakpoint
CREATE INDEX `shift_instances_machine_start_idx` ON `shift_instances` (`machine_id`,`start`);--> statement-breakpoint
CREATE TABLE `signal_rollups` (
	`signal_id` integer NOT NULL,
	`width_seconds` integer NOT NULL,
	`bucket_start` integer NOT NULL,
	`sample_count` integer NOT NULL,
	`value_sum` real NOT NULL,
	`value_min` real NOT NULL,
	`value_max` real NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`signal_id`, `width_seconds`, `bucket_start`),
	FOREIGN KEY (`signal_id`) REFERENCES `signals`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `signal_samples` (
	`signal_id` integer NOT NULL,
	`ts` integer NOT NULL,
	`value` real NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`signal_id`, `ts`),
	FOREIGN KEY (`signal_id`) REFERENCES `signals`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `signals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`public_id` text NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`name` text NOT NULL,
	`display_name` text NOT NULL,
	`kind` text,
	`description_en` text,
	`description_es` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `signals_public_id_unique` ON `signals` (`public_id`);--> statement-breakpoint
CREATE INDEX `signals_machine_idx` ON `signals` (`company_id`,`machine_id`);--> statement-breakpoint
CREATE TABLE `simple_work_orders` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `simple_work_orders_company_name_unique` ON `simple_work_orders` (`company_id`,`name`);--> statement-breakpoint
CREATE TABLE `skus` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`sku` text NOT NULL,
	`name` text,
	`description` text,
	`unit` text DEFAULT 'units',
	`archived` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `skus_company_idx` ON `skus` (`company_id`,`sku`);--> statement-breakpoint
CREATE TABLE `stop_causes` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stop_causes_company_kind_name_unique` ON `stop_causes` (`company_id`,`kind`,`name`);--> statement-breakpoint
CREATE TABLE `stop_classifications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`stop_id` integer NOT NULL,
	`description` text,
	`component_id` text,
	`specific_cause_id` text,
	`general_cause_id` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`stop_id`) REFERENCES `stops`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`component_id`) REFERENCES `stop_causes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`specific_cause_id`) REFERENCES `stop_causes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`general_cause_id`) REFERENCES `stop_causes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stop_classifications_stop_unique` ON `stop_classifications` (`stop_id`);--> statement-breakpoint
CREATE TABLE `stops` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`start_time` integer NOT NULL,
	`end_time` integer,
	`is_programmed` integer NOT NULL,
	`is_included_in_availability` integer DEFAULT true NOT NULL,
	`is_included_in_stops` integer DEFAULT true NOT NULL,
	`is_manual` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `stops_machine_start_idx` ON `stops` (`machine_id`,`start_time`);--> statement-breakpoint
CREATE INDEX `stops_company_start_idx` ON `stops` (`company_id`,`start_time`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`delivery_id` text NOT NULL,
	`request_id` text NOT NULL,
	`at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`status_code` integer,
	`error` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`event_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`enqueued_at` integer,
	`rounds` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`event_id`) REFERENCES `webhook_events`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending_idx` ON `webhook_deliveries` (`status`,`enqueued_at`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`event_type` text NOT NULL,
	`body` text NOT NULL,
	`event_timestamp` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_events_company_idx` ON `webhook_events` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`event_type` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhooks_company_idx` ON `webhooks` (`company_id`,`event_type`);--> statement-breakpoint
CREATE TABLE `work_orders` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` text DEFAULT 'InProgress' NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `work_orders_company_name_unique` ON `work_orders` (`company_id`,`name`);