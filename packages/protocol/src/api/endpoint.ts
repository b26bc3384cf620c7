import type { z } from 'zod';

/** The HTTP methods the REST API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One REST route as a contract: method, path (with `:name` parameters), the request schema (the JSON body, or the
 * query for a GET) and the response schema. The gateway's tests parse every answer with `response`; the web app's
 * client builds its typed calls from the same objects, so a route and its caller cannot drift apart unseen.
 */
export interface Endpoint<
  Path extends string = string,
  Request extends z.ZodType | undefined = z.ZodType | undefined,
  Response extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  path: Path;
  request?: Request;
  response: Response;
}

/** Declares an endpoint; the literal path type keeps its parameters typed. */
export function endpoint<
  Path extends string,
  Response extends z.ZodType,
  Request extends z.ZodType | undefined = undefined,
>(e: Endpoint<Path, Request, Response>): Endpoint<Path, Request, Response> {
  return e;
}

/** `'/api/members/:user_id'` → `'user_id'`. */
export type PathParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParamNames<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path parameters of an endpoint as an object. */
export type PathParams<Path extends string> = { [K in PathParamNames<Path>]: string };

/**
 * What a caller passes: the path parameters and the request's fields in one object, as the gateway itself merges
 * them (`{ ...body, ...params }`).
 */
export type EndpointInput<E extends Endpoint> =
  E extends Endpoint<infer Path, infer Request, z.ZodType>
    ? PathParams<Path> & (Request extends z.ZodType ? z.input<Request> : unknown)
    : never;

/** What the endpoint answers, as parsed by its schema. */
export type EndpointOutput<E extends Endpoint> = z.output<E['response']>;

/** The names of the path parameters in `path`, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? '');
}

/** Fills `:name` parameters with their URL-encoded values; a missing one is an error, never an empty segment. */
export function fillPath(path: string, params: Record<string, unknown>): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = params[name];
    if (typeof value !== 'string' || value === '') throw new Error(`missing path parameter "${name}" for ${path}`);
    return encodeURIComponent(value);
  });
}

/** A call's URL and JSON body, from the merged input (path parameters and request fields in one object). */
export function requestParts(
  e: Endpoint,
  input: Record<string, unknown> = {},
): { method: HttpMethod; url: string; body?: Record<string, unknown> } {
  const names = new Set(pathParamNames(e.path));
  const path = fillPath(e.path, input);
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!names.has(k) && v !== undefined) rest[k] = v;
  if (e.method !== 'GET') return { method: e.method, url: path, ...(e.request ? { body: rest } : {}) };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(rest)) query.set(k, String(v));
  const qs = query.toString();
  return { method: e.method, url: qs ? `${path}?${qs}` : path };
}
