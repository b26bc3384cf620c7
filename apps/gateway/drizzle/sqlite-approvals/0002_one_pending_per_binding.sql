-- Duplicates from before the index (two gateways asking at once): all but the newest pending request of a binding expire.
UPDATE `approval_requests` SET `status` = 'expired' WHERE `status` = 'pending' AND EXISTS (SELECT 1 FROM `approval_requests` AS `n` WHERE `n`.`status` = 'pending' AND `n`.`credential_id` = `approval_requests`.`credential_id` AND `n`.`tool` = `approval_requests`.`tool` AND `n`.`machine_id` = `approval_requests`.`machine_id` AND `n`.`args_hash` = `approval_requests`.`args_hash` AND `n`.`policy_hash` = `approval_requests`.`policy_hash` AND (`n`.`created_at` > `approval_requests`.`created_at` OR (`n`.`created_at` = `approval_requests`.`created_at` AND `n`.`id` > `approval_requests`.`id`)));
--> statement-breakpoint
CREATE TABLE `approval_gate_locks` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`gates` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_requests_one_pending` ON `approval_requests` (`credential_id`,`tool`,`machine_id`,`args_hash`,`policy_hash`) WHERE status = 'pending';