-- Older open links beside the newest of an account (none should exist) are retired before the index.
UPDATE `setup_links` SET `used_at` = `created_at` WHERE `used_at` IS NULL AND EXISTS (SELECT 1 FROM `setup_links` AS `n` WHERE `n`.`used_at` IS NULL AND `n`.`account_id` = `setup_links`.`account_id` AND (`n`.`created_at` > `setup_links`.`created_at` OR (`n`.`created_at` = `setup_links`.`created_at` AND `n`.`id` > `setup_links`.`id`)));
--> statement-breakpoint
CREATE UNIQUE INDEX `setup_links_one_open` ON `setup_links` (`account_id`) WHERE used_at IS NULL;