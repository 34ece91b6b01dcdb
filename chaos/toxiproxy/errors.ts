import { ReboundError } from '../../lib/errors.ts';
import type { ChaosErrorCode } from './types.ts';

/**
 * A Toxiproxy wire error: `{"error": message, "status": status}`. These are the API's answers to
 * bad input, not Rebound errors, so they keep Toxiproxy's message catalogue (api.go) verbatim.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const apiErrors = {
  badBody: (why?: string) => new ApiError(why ? `bad request body: ${why}` : 'bad request body', 400),
  missingField: (what: string) => new ApiError(`missing required field: ${what}`, 400),
  proxyNotFound: () => new ApiError('proxy not found', 404),
  proxyExists: () => new ApiError('proxy already exists', 409),
  invalidStream: () => new ApiError('stream was invalid, can be either upstream or downstream', 400),
  invalidToxicType: () => new ApiError('invalid toxic type', 400),
  toxicExists: () => new ApiError('toxic already exists', 409),
  toxicNotFound: () => new ApiError('toxic not found', 404),
  /** Ours: a non-loopback listen or upstream without the public opt-in. */
  notLoopback: (what: string, optIn: string) => new ApiError(`${what} is not a loopback address: ${optIn}`, 400),
  /** Go's raw `net` error text for listen/resolve failures, always 500. */
  listen: (message: string) => new ApiError(message, 500),
};

/**
 * Errors our own chaos code raises (server start-up, runner helper): ReboundErrors restricted to
 * the chaos codes, so callers can narrow on the class.
 */
export class ChaosError extends ReboundError {
  declare readonly code: ChaosErrorCode;
  constructor(code: ChaosErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ChaosError';
  }
}
