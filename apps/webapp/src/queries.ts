/**
 * Data fetching with TanStack Query over the typed client: one cache for the whole app, keyed by endpoint path and
 * input, so two pages asking for `/api/machines` share one request, a page left and revisited shows its data at
 * once, and a change invalidates exactly the lists it touches.
 */
import type { Endpoint, EndpointInput, EndpointOutput } from '@letkite/protocol/api';
import {
  MutationCache,
  QueryCache,
  QueryClient,
  type UseMutationResult,
  type UseQueryResult,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { ApiError, call } from './api';

/** A refusal (4xx) is an answer, not a hiccup: retrying cannot change it. */
function worthRetrying(failures: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
  return failures < 2;
}

/** Fired on `window` when the gateway answers `unauthenticated`: the session ended (revoked, expired). */
export const SESSION_ENDED_EVENT = 'letkite:session-ended';

function noticeSessionEnd(error: unknown): void {
  if (error instanceof ApiError && error.code === 'unauthenticated') {
    window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
  }
}

/**
 * The app's cache. Data stays fresh for a few seconds, so quick navigation does not refetch. Any answer saying
 * the session is gone announces it, so the app re-reads the session and sends the person to sign in.
 */
export function newQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: noticeSessionEnd }),
    mutationCache: new MutationCache({ onError: noticeSessionEnd }),
    defaultOptions: {
      queries: { staleTime: 5_000, retry: worthRetrying, refetchOnWindowFocus: true },
      mutations: { retry: false },
    },
  });
}

/** The cache key of an endpoint call: `['api', path, input]`; `['api', path]` matches every input. */
export function queryKeyOf(e: Endpoint, input?: unknown): readonly unknown[] {
  return input === undefined ? ['api', e.path] : ['api', e.path, input];
}

/** Reads an endpoint through the cache; `enabled: false` waits (e.g. until the person may see it). */
export function useApiQuery<E extends Endpoint>(
  e: E,
  input?: EndpointInput<E>,
  options: { enabled?: boolean; refetchInterval?: number } = {},
): UseQueryResult<EndpointOutput<E>, Error> {
  return useQuery({
    queryKey: queryKeyOf(e, input ?? {}),
    queryFn: ({ signal }) => call(e, input, signal),
    ...options,
  });
}

/** A change through an endpoint; on success every listed endpoint's cached answers are refetched. */
export function useApiMutation<E extends Endpoint>(
  e: E,
  options: { invalidates?: readonly Endpoint[] } = {},
): UseMutationResult<EndpointOutput<E>, Error, EndpointInput<E>> {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: EndpointInput<E>) => call(e, input),
    onSuccess: async () => {
      await Promise.all(
        (options.invalidates ?? []).map((x) => queryClient.invalidateQueries({ queryKey: queryKeyOf(x) })),
      );
    },
  });
}
