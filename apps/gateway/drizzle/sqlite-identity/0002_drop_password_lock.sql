ALTER TABLE `user_passwords` DROP COLUMN `failed_attempts`;--> statement-breakpoint
ALTER TABLE `user_passwords` DROP COLUMN `locked_until`;