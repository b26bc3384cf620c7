import { z } from 'zod';
import { FileAccessLevel } from './levels';
import { PathPattern } from './path-pattern';

/** One entry of `files`: a path pattern and the access the file tools (and the sandbox) get there. */
export const FileRule = z.strictObject({ path: PathPattern, access: FileAccessLevel });
export type FileRule = z.infer<typeof FileRule>;

/** A `files` list; the same path twice is refused because which entry wins would be a guess. */
export const FileRules = z.array(FileRule).superRefine((rules, ctx) => {
  const seen = new Map<string, number>();
  rules.forEach((rule, i) => {
    const first = seen.get(rule.path);
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [i, 'path'],
        message: `${JSON.stringify(rule.path)} is listed twice (also at index ${first})`,
      });
    } else seen.set(rule.path, i);
  });
});
