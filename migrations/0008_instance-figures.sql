CREATE TABLE `instance_figures` (
	`shift_instance_id` integer PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`start` integer NOT NULL,
	`end` integer NOT NULL,
	`parts` text NOT NULL,
	`whole` text NOT NULL,
	FOREIGN KEY (`shift_instance_id`) REFERENCES `shift_instances`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `instance_figures_machine_start_idx` ON `instance_figures` (`machine_id`,`start`);--> statement-breakpoint
CREATE TABLE `machine_writes` (
	`machine_id` integer PRIMARY KEY NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
