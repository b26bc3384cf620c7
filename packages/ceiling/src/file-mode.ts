/** Why a ceiling file cannot be trusted; the agent then fails closed and reports the reason. */
export const ceilingFileProblems = ['not_a_regular_file', 'wrong_owner', 'group_writable', 'other_writable'] as const;
export type CeilingFileProblemCode = (typeof ceilingFileProblems)[number];

export interface CeilingFileProblem {
  code: CeilingFileProblemCode;
  message: string;
}

export interface CeilingFileModeInput {
  /** Owner uid from stat (of the file itself, symlinks followed). */
  uid: number;
  /** `st_mode`: permission bits, with the file-type bits when stat provides them. */
  mode: number;
  /** Owners to accept: root (0), plus the agent's own uid when it does not run as root. */
  expectedUids: readonly number[];
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/**
 * Decides whether a ceiling file is safe to trust (DESIGN §5): a regular file, owned by an expected uid, not
 * writable by group or others, because whoever can write it can raise the ceiling. Returns every problem; an
 * empty list means trusted. Pure, so the agent and `letkite ceiling check` decide the same way.
 */
export function checkCeilingFileMode(input: CeilingFileModeInput): CeilingFileProblem[] {
  const problems: CeilingFileProblem[] = [];
  const octal = `0${(input.mode & 0o7777).toString(8).padStart(3, '0')}`;
  const type = input.mode & S_IFMT;
  if (type !== 0 && type !== S_IFREG) {
    problems.push({ code: 'not_a_regular_file', message: 'is not a regular file' });
  }
  if (!input.expectedUids.includes(input.uid)) {
    const expected = input.expectedUids.map((uid) => (uid === 0 ? 'root (uid 0)' : `uid ${uid}`)).join(' or ');
    problems.push({
      code: 'wrong_owner',
      message: `is owned by uid ${input.uid}; it must be owned by ${expected || 'an expected account'}`,
    });
  }
  if (input.mode & 0o020) {
    problems.push({ code: 'group_writable', message: `is writable by its group (mode ${octal}); run chmod g-w` });
  }
  if (input.mode & 0o002) {
    problems.push({ code: 'other_writable', message: `is writable by others (mode ${octal}); run chmod o-w` });
  }
  return problems;
}
