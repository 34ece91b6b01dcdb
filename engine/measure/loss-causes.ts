import { ReboundError } from '../../lib/errors.ts';

/**
 * Why each lost (client, message) was lost, and what each reconnect's resume did.
 *
 * The ledger says *that* an accepted message never reached a client; this module says *why*,
 * from that client's own timeline (when it was connected, each offline span, how each span ended
 * and what the resume attempt achieved) and the publisher's window for the message (from sending
 * the accepted attempt to its 201). Pure functions: the runner records, this decides.
 *
 * One message, one client, one cause, from a closed union: the causes sum to the ledger's
 * lostDeliveries exactly (`tallyLoss` asserts it).
 */

/** Why a resume attempt failed: part of a `rejected` outcome, and a loss cause of its own. */
const REJECT_CAUSES = [
  /** The server no longer knew the session (expired, evicted, never stored): Socket.IO CSR not recovered. */
  'session_expired',
  /** The client's position fell out of the stream's history (over its limit, its TTL or its bytes). */
  'history_evicted',
  /** The client's position named an epoch the broker no longer has (it came back empty). */
  'epoch_changed',
  /**
   * The client came back without a position to resume from: no session was restored and nothing
   * was asked, or it had not got its first message yet and so asked by time (AnyCable's `since`),
   * which the server answers with what its history still holds, unable to see a hole.
   */
  'no_offset',
  /**
   * The server restarted and the resume did not make up for it: it said so (disconnect
   * server_restart), or it cut the client without a word and came back with a new epoch (killed).
   */
  'server_restarted',
  /** The server refused the history request for another reason (stream unknown, offset ahead, a gap, its broker failing the read) or gave none. */
  'history_rejected',
  /** The server cut the client as a slow consumer (disconnect too_slow). */
  'too_slow',
] as const;
export type RejectCause = (typeof REJECT_CAUSES)[number];

/**
 * Every loss cause. Besides the resume failures above:
 * - `lost_while_connected`: the client was connected and subscribed for the message's whole
 *   window and it never came: the target dropped a live frame.
 * - `offline_nothing_to_resume`: lost while offline on an at-most-once protocol (ws, default
 *   Socket.IO): nothing promised to make it up, so nothing failed but the delivery.
 * - `resume_incomplete`: lost while offline although the reconnect said the session was restored
 *   or the history filled the gap: the resume itself left a hole.
 * - `not_back_by_end`: lost while offline, and the client was still offline when the run ended.
 * - `before_first_connect`: published before the client first subscribed (its connect failed or came late).
 * - `publisher_side`: the publisher has no send window for the message (its acceptance is known
 *   but not when it happened), so no client's timeline can place it: never booked to the target.
 */
export const LOSS_CAUSES = ['lost_while_connected', 'offline_nothing_to_resume', ...REJECT_CAUSES, 'resume_incomplete', 'not_back_by_end', 'before_first_connect', 'publisher_side'] as const;
export type LossCause = (typeof LOSS_CAUSES)[number];

/** How reports name each cause ("lost by cause" rows). */
export const LOSS_CAUSE_LABELS: Readonly<Record<LossCause, string>> = {
  lost_while_connected: 'lost while connected',
  offline_nothing_to_resume: 'lost while offline, nothing to resume',
  session_expired: 'offline, session expired or unknown',
  history_evicted: 'offline, history evicted',
  epoch_changed: 'offline, epoch changed',
  no_offset: 'offline, no offset to resume from',
  server_restarted: 'offline, server restarted',
  history_rejected: 'offline, history rejected',
  too_slow: 'offline, cut as too slow',
  resume_incomplete: 'offline, resume left a gap',
  not_back_by_end: 'offline, not back by the end',
  before_first_connect: 'before the first connect',
  publisher_side: 'publisher side',
};

export type ResumeOutcome =
  | { kind: 'session_restored' }
  | { kind: 'history_filled' }
  | { kind: 'rejected'; cause: RejectCause }
  | { kind: 'nothing_to_resume' }
  | { kind: 'not_attempted' };

/** Report key of an outcome: `rejected` carries its cause (`rejected:history_evicted`). */
export const outcomeKey = (o: ResumeOutcome): string => (o.kind === 'rejected' ? `rejected:${o.cause}` : o.kind);

/**
 * How a target resumes, which decides what a reconnect's events mean:
 * - `none`: at-most-once (ws, default Socket.IO): every reconnect is `nothing_to_resume`.
 * - `session`: the server restores the session or nothing (Socket.IO CSR: `socket.recovered`).
 * - `history`: session restore and/or history by offset (AnyCable's extended protocol).
 */
export type ResumeProtocol = 'none' | 'session' | 'history';

/**
 * A target's resume protocol: what its definition declares (`capabilities.resume`, engine/targets);
 * for a bare `{name, replays}` (older callers), Socket.IO's replaying target is CSR and every other
 * replaying target speaks AnyCable's.
 */
export function resumeProtocolOf(target: { name: string; replays: boolean; capabilities?: { resume: ResumeProtocol } }): ResumeProtocol {
  if (target.capabilities) return target.capabilities.resume;
  if (!target.replays) return 'none';
  return target.name.startsWith('socketio') ? 'session' : 'history';
}

/** What a client saw on one reconnect: the session flag of its `connected` event, and the history answer that followed, if any. */
export interface ReconnectEvidence {
  restored: boolean;
  history?: { ok: boolean; reason?: string };
}

/** A `reject_history` reason (the replay server names it; anycable-go and older servers may not) to a cause. */
export function historyRejectCause(reason: string | undefined): RejectCause {
  switch (reason) {
    case 'offset_evicted':
      return 'history_evicted';
    case 'epoch_changed':
    case 'unknown_epoch':
      return 'epoch_changed';
    default:
      return 'history_rejected';
  }
}

/** One reconnect's outcome from what the client saw (a span closed with no evidence: no session restored, no history answer). */
export function resumeOutcome(protocol: ResumeProtocol, ev: ReconnectEvidence = { restored: false }): ResumeOutcome {
  if (protocol === 'none') return { kind: 'nothing_to_resume' };
  if (protocol === 'session') return ev.restored ? { kind: 'session_restored' } : { kind: 'rejected', cause: 'session_expired' };
  // AnyCable: a history answer is the last word (a restored session asks for history too).
  if (ev.history) return ev.history.ok ? { kind: 'history_filled' } : { kind: 'rejected', cause: historyRejectCause(ev.history.reason) };
  return ev.restored ? { kind: 'session_restored' } : { kind: 'not_attempted' };
}

/** One offline span of a client: from the moment it went down (or a disruption hit it) until it was subscribed again. */
export interface OfflineSpan {
  /** ms since epoch: the earlier of the disruption that hit it and the disconnect the client noticed. */
  downAt: number;
  /** Subscribed again (ms since epoch); absent while still offline. */
  upAt?: number;
  /** Who ended the connection: `dropped` (the runner), `server_closed`, `transport_error`. */
  reason?: string;
  /** The server's reason when it gave one (`too_slow`, `server_restart`). */
  detail?: string;
  /** The highest seq the client had received when it noticed it was down (absent: none yet). */
  lastSeq?: number;
  /** What the reconnect that closed the span saw. */
  evidence?: ReconnectEvidence;
}

export interface ClientTimeline {
  /** First subscription, ms since epoch; absent when the client never connected. */
  firstUpAt?: number;
  /** In time order; at most the last one is open. */
  spans: OfflineSpan[];
}

/** When the target handled the message: from sending its accepted attempt to the 201. */
export interface MessageWindow {
  sentAt: number;
  answeredAt: number;
}

export interface ClassifyOptions {
  protocol: ResumeProtocol;
  /**
   * A frame the target sent this long before the client noticed it was down may have died in the
   * socket with it: such a message counts as lost while offline. Default 1000 ms.
   */
  inFlightMs?: number;
  /**
   * The publisher's windows: with them, a span the server ended for its own stated reason
   * (`too_slow`, `server_restart`) also takes every message the server took after the last one
   * that connection delivered, however long before the client noticed (a client behind a stalled
   * reader hears of the cut only once it has read the backlog).
   */
  windowOf?: (seq: number) => MessageWindow | undefined;
}

/** Server-stated reasons whose span owns what the server dropped with the connection (see `windowOf`). */
const SERVER_CUT_DETAILS: ReadonlySet<string | undefined> = new Set(['too_slow', 'server_restart']);

export const DEFAULT_IN_FLIGHT_MS = 1000;

/** The first offline span the message's window touches (the span widened by the in-flight margin before it). */
function spanOf(t: ClientTimeline, m: MessageWindow, o: ClassifyOptions): OfflineSpan | undefined {
  const margin = o.inFlightMs ?? DEFAULT_IN_FLIGHT_MS;
  for (const s of t.spans) {
    if (m.sentAt > (s.upAt ?? Infinity)) continue;
    if (m.answeredAt >= s.downAt - margin || queuedAtCut(s, m, o)) return s;
  }
  return undefined;
}

/**
 * `m` was queued behind the last delivery of a connection the server cut for a stated reason:
 * the server had answered that delivery's publish before `m` was sent, so it ordered `m` after
 * it, and the connection delivered nothing more. Bounded to server-stated cuts because those book
 * the loss to the target either way; our own drop would move a silent stall to "offline".
 */
function queuedAtCut(s: OfflineSpan, m: MessageWindow, o: ClassifyOptions): boolean {
  if (!o.windowOf || !s.lastSeq || !SERVER_CUT_DETAILS.has(s.detail)) return false;
  const last = o.windowOf(s.lastSeq);
  return last !== undefined && m.sentAt >= last.answeredAt;
}

/** The cause of losing message `m` at the client with timeline `t`. */
export function classifyLoss(t: ClientTimeline, m: MessageWindow | undefined, o: ClassifyOptions): LossCause {
  if (!m || !Number.isFinite(m.sentAt) || !Number.isFinite(m.answeredAt)) return 'publisher_side';
  if (t.firstUpAt === undefined || m.answeredAt < t.firstUpAt) return 'before_first_connect';
  const s = spanOf(t, m, o);
  if (!s) return 'lost_while_connected';
  return spanCause(s, o.protocol);
}

/** Why the messages of one offline span were lost. */
export function spanCause(s: OfflineSpan, protocol: ResumeProtocol): LossCause {
  if (s.upAt === undefined) return 'not_back_by_end';
  const out = resumeOutcome(protocol, s.evidence);
  // A history filled for a client that had got nothing yet was asked by time: confirming what is
  // left is the protocol's own answer to that, so the hole is the missing offset's, not the resume's.
  if (out.kind === 'history_filled' && !s.lastSeq) return 'no_offset';
  if (out.kind === 'session_restored' || out.kind === 'history_filled') return 'resume_incomplete';
  // The server's own reason for cutting the client outranks the resume that could not repair it.
  if (s.detail === 'too_slow') return 'too_slow';
  if (s.detail === 'server_restart') return 'server_restarted';
  // Cut off without a word by the server's side (not our drop) and back to a server that no longer
  // knows the epoch: the process died and came back without its memory (kill -9 of a memory-broker
  // server). A broker restarted empty under a live server cuts nobody; a client we dropped across
  // it stays epoch_changed. (A partition that happens to span an empty Redis restart would read as
  // a restart too: the client cannot tell those apart.)
  // A stream the client had a position in and the server no longer knows at all is the same
  // forgetting, seen before the new process stored anything on it.
  const forgotten = out.kind === 'rejected' && (out.cause === 'epoch_changed' || s.evidence?.history?.reason === 'stream_not_found');
  if (forgotten && s.reason !== undefined && s.reason !== 'dropped') return 'server_restarted';
  if (out.kind === 'rejected') return out.cause;
  if (out.kind === 'nothing_to_resume') return 'offline_nothing_to_resume';
  return 'no_offset';
}

/** A client's lost deliveries by cause. */
export type LossByCause = Partial<Record<LossCause, number>>;

/**
 * Classify every lost (client, seq) and count by cause. Throws RR_ERR_RUN_FAILED (a bug in the
 * runner, not a finding about the target) when the causes do not sum to `lostDeliveries`.
 */
export function tallyLoss(input: {
  clients: number;
  lostSeqsOf: (client: number) => Iterable<number>;
  timelineOf: (client: number) => ClientTimeline;
  windowOf: (seq: number) => MessageWindow | undefined;
  lostDeliveries: number;
  options: ClassifyOptions;
  /** A cause decided elsewhere for some deliveries (the epoch book's broker restart), ahead of the timeline's (except server_restarted). */
  overrideOf?: (client: number, seq: number) => LossCause | undefined;
}): LossByCause {
  const out: LossByCause = {};
  let n = 0;
  for (let c = 0; c < input.clients; c++) {
    const t = input.timelineOf(c);
    for (const seq of input.lostSeqsOf(c)) {
      const own = classifyLoss(t, input.windowOf(seq), input.options);
      // The server saying it restarted is the more specific account of an epoch that ended with it.
      const cause = own === 'server_restarted' ? own : (input.overrideOf?.(c, seq) ?? own);
      out[cause] = (out[cause] ?? 0) + 1;
      n++;
    }
  }
  if (n !== input.lostDeliveries) throw new ReboundError('RR_ERR_RUN_FAILED', `loss by cause sums to ${n} deliveries, the ledger lost ${input.lostDeliveries}`, { details: { classified: n, lostDeliveries: input.lostDeliveries } });
  return out;
}

/** Every closed span's outcome, counted by `outcomeKey`. */
export function tallyOutcomes(timelines: Iterable<ClientTimeline>, protocol: ResumeProtocol): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of timelines)
    for (const s of t.spans) {
      if (s.upAt === undefined) continue;
      const k = outcomeKey(resumeOutcome(protocol, s.evidence));
      out[k] = (out[k] ?? 0) + 1;
    }
  return out;
}

/**
 * How a delivered message reached the client, for splitting late deliveries: `live` when its
 * window touches no offline span of that client, else the outcome of the reconnect that ended the
 * span it fell in (`history_filled`, `session_restored`...; `still_offline` if that span never ended).
 */
export function deliveryPath(t: ClientTimeline, m: MessageWindow | undefined, o: ClassifyOptions): string {
  if (!m || !Number.isFinite(m.sentAt) || !Number.isFinite(m.answeredAt)) return 'live';
  const s = spanOf(t, m, o);
  if (!s) return 'live';
  return s.upAt === undefined ? 'still_offline' : outcomeKey(resumeOutcome(o.protocol, s.evidence));
}

/** How reports name a resume outcome key (`outcomeKey`) or a late delivery's path (`deliveryPath`). */
export function outcomeLabel(key: string): string {
  if (key.startsWith('rejected:')) {
    const cause = key.slice('rejected:'.length) as RejectCause;
    return `rejected: ${(LOSS_CAUSE_LABELS[cause] ?? cause).replace(/^offline, /, '')}`;
  }
  const words: Record<string, string> = {
    session_restored: 'session restored',
    history_filled: 'history filled the gap',
    nothing_to_resume: 'nothing to resume (at-most-once)',
    not_attempted: 'resume not attempted',
    live: 'live (slow while connected)',
    still_offline: 'still offline at the end',
  };
  return words[key] ?? key.replace(/_/g, ' ');
}
