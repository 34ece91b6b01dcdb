import { ReboundError } from '../../lib/errors.ts';

export const RAILWAY_API_URL = 'https://backboard.railway.com/graphql/v2';

export interface GqlClient {
  <T>(operationName: string, query: string, variables: Record<string, unknown>): Promise<T>;
}

/** Which token authenticates, and how: the two kinds Railway issues go in different headers. */
export interface RailwayAuth {
  /** The env variable the token came from, named in every error. */
  source: 'RAILWAY_TOKEN' | 'RAILWAY_API_TOKEN';
  headers: Record<string, string>;
}

/**
 * Railway's CLI (railwayapp/cli src/client.rs, `new_authorized`): `RAILWAY_TOKEN` is a project
 * token sent as `project-access-token`; `RAILWAY_API_TOKEN` is an account or workspace token sent
 * as `Authorization: Bearer`. When both are set the CLI uses `RAILWAY_TOKEN`, and so do we, so a
 * shell that works for `railway` works for `npm run fleet`.
 */
export function railwayAuth(env: { RAILWAY_TOKEN?: string; RAILWAY_API_TOKEN?: string }): RailwayAuth | undefined {
  if (env.RAILWAY_TOKEN) return { source: 'RAILWAY_TOKEN', headers: { 'project-access-token': env.RAILWAY_TOKEN } };
  if (env.RAILWAY_API_TOKEN) return { source: 'RAILWAY_API_TOKEN', headers: { authorization: `Bearer ${env.RAILWAY_API_TOKEN}` } };
  return undefined;
}

/**
 * Railway's public GraphQL API: POST {query, variables, operationName}. Any transport error,
 * non-2xx or `errors` array becomes RR_ERR_FLEET_API with Railway's own messages and the token
 * variable that was used (a "Not Authorized" is usually the wrong kind of token).
 */
export function railwayClient(auth: RailwayAuth, endpoint = RAILWAY_API_URL, timeoutMs = 30_000): GqlClient {
  const using = `using ${auth.source} as ${auth.source === 'RAILWAY_TOKEN' ? 'a project token (project-access-token header)' : 'an account/workspace token (Bearer)'}`;
  return async <T>(operationName: string, query: string, variables: Record<string, unknown>): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth.headers },
        body: JSON.stringify({ operationName, query, variables }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      throw new ReboundError('RR_ERR_FLEET_API', `Railway API ${endpoint} unreachable (${operationName}, ${using}): ${e.cause?.code ?? e.message}`, { details: { operation: operationName, token: auth.source } });
    }
    const text = await res.text();
    let body: { data?: T; errors?: { message: string }[] } = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* reported below with the status */
    }
    if (!res.ok || body.errors?.length || body.data === undefined || body.data === null) {
      const why = body.errors?.map((e) => e.message).join('; ') || text.slice(0, 200);
      throw new ReboundError('RR_ERR_FLEET_API', `Railway API ${operationName} answered ${res.status} (${using}): ${why}`, { details: { status: res.status, operation: operationName, token: auth.source } });
    }
    return body.data;
  };
}
