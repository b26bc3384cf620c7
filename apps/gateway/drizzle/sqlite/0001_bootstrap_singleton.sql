CREATE TABLE `gateway_bootstrap` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
-- A database made before this table: its first account is the bootstrapped one.
INSERT INTO `gateway_bootstrap` (`id`, `account_id`, `created_at`) SELECT 1, `id`, `created_at` FROM `accounts` ORDER BY `created_at` LIMIT 1;
