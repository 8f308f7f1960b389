ALTER TABLE `companies` ADD `revision` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `companies` ADD `mirrored_revision` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `companies_mirror_pending_idx` ON `companies` (`id`) WHERE mirrored_revision < revision;