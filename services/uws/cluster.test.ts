/** `--workers 2` of the uWS server (SO_REUSEPORT): the cluster contract shared with ws and Socket.IO. */
import { describe } from 'vitest';
import { describeClusterContract } from '../common/cluster-contract.ts';
import { uwsAvailability } from './load.ts';

describe.skipIf(!uwsAvailability().available)('uws cluster', () => describeClusterContract('uws'));
