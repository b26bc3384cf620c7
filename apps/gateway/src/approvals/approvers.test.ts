import type { ApproverKind } from '@letkite/policy';
import { describe, expect, test } from 'vitest';
import { type ApproverCandidate, eligibleApprovers, whyNotApprover } from './approvers';

const all = new Set(['approvals.decide', 'audit.read']);
const members: ApproverCandidate[] = [
  { userId: 'owner', role: 'owner', permissions: all },
  { userId: 'admin', role: 'admin', permissions: all },
  { userId: 'requester', role: 'member', permissions: new Set(['clients.connect']) },
  { userId: 'decider', role: 'member', permissions: new Set(['approvals.decide']) },
  { userId: 'viewer', role: 'member', permissions: new Set(['machines.view']) },
];

describe('eligibleApprovers', () => {
  test.each<[ApproverKind, string, string[]]>([
    ['connector', 'requester', ['owner', 'admin', 'requester']],
    ['any_admin', 'requester', ['owner', 'admin']],
    ['four_eyes', 'requester', ['owner', 'admin', 'decider']],
    ['four_eyes', 'owner', ['admin', 'decider']],
    ['connector', 'owner', ['owner', 'admin']],
  ])('%s for a request by %s: %j', (kind, requester, expected) => {
    expect(eligibleApprovers(kind, requester, members).map((m) => m.userId)).toEqual(expected);
  });

  test('under four-eyes an owner who asked cannot approve their own request', () => {
    expect(whyNotApprover('four_eyes', 'owner', 'owner', members)).toMatch(/cannot approve/);
    expect(whyNotApprover('four_eyes', 'owner', 'admin', members)).toBeNull();
  });

  test('a member without approvals.decide is never an approver, except as the connector', () => {
    for (const kind of ['any_admin', 'four_eyes'] as const) {
      expect(whyNotApprover(kind, 'requester', 'viewer', members)).not.toBeNull();
    }
    expect(whyNotApprover('connector', 'viewer', 'viewer', members)).toBeNull();
    expect(whyNotApprover('connector', 'requester', 'viewer', members)).not.toBeNull();
  });

  test('someone no longer a member decides nothing', () => {
    expect(whyNotApprover('connector', 'gone', 'gone', members)).not.toBeNull();
  });
});
