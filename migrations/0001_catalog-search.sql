ALTER TABLE `operators` ADD `first_name_search` text;--> statement-breakpoint
ALTER TABLE `operators` ADD `last_name_search` text;--> statement-breakpoint
ALTER TABLE `skus` ADD `sku_search` text;--> statement-breakpoint
ALTER TABLE `skus` ADD `name_search` text;--> statement-breakpoint
ALTER TABLE `skus` ADD `description_search` text;--> statement-breakpoint
ALTER TABLE `skus` ADD `unit_search` text;