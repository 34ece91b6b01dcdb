/** `--workers 2` of the raw ws server: the cluster contract shared with Socket.IO. */
import { describeClusterContract } from '../common/cluster-contract.ts';

describeClusterContract('ws');
