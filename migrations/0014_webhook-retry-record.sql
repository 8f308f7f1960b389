ALTER TABLE `webhook_deliveries` ADD `attempts_in_round` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `next_attempt_at` integer;--> statement-breakpoint
-- Added by hand after drizzle-kit: a pending delivery in the middle of a round keeps its count,
-- taken as the rule before this migration took it (its attempts since `updated_at`). Its next
-- attempt stays unknown (null): the sweeper then reads the message's sending, as for a
-- delivery not attempted yet, and a re-send it makes is a duplicate its deliverer ignores.
UPDATE `webhook_deliveries` SET `attempts_in_round` = (
  SELECT count(*) FROM `webhook_attempts` AS a
  WHERE a.`delivery_id` = `webhook_deliveries`.`id` AND a.`at` >= `webhook_deliveries`.`updated_at`
) WHERE `status` = 'pending';
