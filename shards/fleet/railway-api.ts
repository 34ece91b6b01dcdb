import { ReboundError } from '../../lib/errors.ts';

export const RAILWAY_API_URL = 'https://backboard.railway.com/graphql/v2';

export interface GqlClient {
  <T>(operationName: string, query: string, variables: Record<string, unknown>): Promise<T>;
}

/**
 * Railway's public GraphQL API (reference section 7): POST {query, variables, operationName}
 * with `Authorization: Bearer <RAILWAY_TOKEN>`. Any transport error, non-2xx or `errors` array
 * becomes RR_ERR_FLEET_API with Railway's own messages.
 */
export function railwayClient(token: string, endpoint = RAILWAY_API_URL, timeoutMs = 30_000): GqlClient {
  return async <T>(operationName: string, query: string, variables: Record<string, unknown>): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ operationName, query, variables }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      throw new ReboundError('RR_ERR_FLEET_API', `Railway API ${endpoint} unreachable (${operationName}): ${e.cause?.code ?? e.message}`);
    }
    const text = await res.text();
    let body: { data?: T; errors?: { message: string }[] } = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* reported below with the status */
    }
    if (!res.ok || body.errors?.length || body.data === undefined) {
      const why = body.errors?.map((e) => e.message).join('; ') || text.slice(0, 200);
      throw new ReboundError('RR_ERR_FLEET_API', `Railway API ${operationName} answered ${res.status}: ${why}`, { details: { status: res.status, operation: operationName } });
    }
    return body.data;
  };
}
