ALTER TABLE `stops` ADD `origin` text DEFAULT 'operatorApi' NOT NULL;--> statement-breakpoint
ALTER TABLE `stops` ADD `detected_start_time` integer;--> statement-breakpoint
ALTER TABLE `stops` ADD `detected_end_time` integer;--> statement-breakpoint
ALTER TABLE `stops` ADD `recorded_start_time` integer;--> statement-breakpoint
ALTER TABLE `stops` ADD `recorded_end_time` integer;--> statement-breakpoint
-- Backfill: the stops the machine's signals detected are the ones whose detector still holds
-- them (a detection key); every other stop was recorded through the operator API.
UPDATE `stops` SET `origin` = 'detected' WHERE `detection_key` IS NOT NULL;
