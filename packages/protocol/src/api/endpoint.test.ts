import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { approvalEndpoints } from './approvals';
import { OkResponse } from './common';
import { type EndpointInput, endpoint, fillPath, pathParamNames, requestParts } from './endpoint';
import { memberEndpoints } from './members';

describe('endpoint paths and calls', () => {
  test('path parameters are named in order and filled URL-encoded', () => {
    expect(pathParamNames('/api/approvals/:id/approve')).toEqual(['id']);
    expect(pathParamNames('/api/a/:x/b/:y_z')).toEqual(['x', 'y_z']);
    expect(fillPath('/api/members/:user_id', { user_id: 'usr_1/../x?y' })).toBe('/api/members/usr_1%2F..%2Fx%3Fy');
  });

  test('a missing or empty path parameter is an error, never an empty segment', () => {
    expect(() => fillPath('/api/members/:user_id', {})).toThrow(/user_id/);
    expect(() => fillPath('/api/members/:user_id', { user_id: '' })).toThrow(/user_id/);
  });

  test('a change sends its fields as the body, without the path parameters', () => {
    expect(requestParts(memberEndpoints.changeRole, { user_id: 'usr_1', role: 'admin', custom_role_id: null })).toEqual(
      {
        method: 'PATCH',
        url: '/api/members/usr_1',
        body: { role: 'admin', custom_role_id: null },
      },
    );
  });

  test('a change without a request schema sends no body; a read sends its fields as the query', () => {
    expect(requestParts(memberEndpoints.remove, { user_id: 'usr_1' })).toEqual({
      method: 'DELETE',
      url: '/api/members/usr_1',
    });
    expect(requestParts(approvalEndpoints.list, { status: 'pending', limit: 5 })).toEqual({
      method: 'GET',
      url: '/api/approvals?status=pending&limit=5',
    });
    expect(requestParts(approvalEndpoints.list, {})).toEqual({ method: 'GET', url: '/api/approvals' });
  });

  test('the input type merges path parameters and the request fields', () => {
    const e = endpoint({
      method: 'PUT',
      path: '/api/things/:thing_id/parts/:part',
      request: z.object({ label: z.string() }),
      response: OkResponse,
    });
    expectTypeOf<EndpointInput<typeof e>>().toEqualTypeOf<{ thing_id: string; part: string } & { label: string }>();
    expectTypeOf<EndpointInput<typeof memberEndpoints.list>>().toEqualTypeOf<Record<never, string> & unknown>();
  });
});
