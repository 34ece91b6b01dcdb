import type { OptionTable } from '../../lib/options.ts';
import type { LatencyReport, EncodedLatency } from '../../engine/measure/latency.ts';
import type { LedgerTotals } from '../../engine/measure/ledger.ts';
import type { Section } from '../../engine/pages/types.ts';
import type { TargetDefinition } from '../../engine/targets/types.ts';
import type { ValidityFlag } from '../../engine/measure/validity.ts';

/**
 * The capacity suite's contract (method: seeds/000, "budgets and steps"). Every scenario is a
 * module with this shape, runs identically for every target through the one TargetClient
 * interface, and returns steps judged against one budget. runners/capacity/run.ts walks
 * scenarios x targets; the CLI, the runner endpoint and the reports only read these types.
 */
export type ScenarioId = 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6' | 'soak' | 'sweep';

export interface ScenarioContext {
  target: TargetDefinition;
  /** An already running target (loopback unless REBOUND_ALLOW_REMOTE_TARGETS=1); undefined = start the local service per step/run as the scenario needs. */
  url?: string;
  seed: number;
  /** Nodes of a shared-broker target from a `name:K` label (`replay-redis:2`); loader scenarios start K nodes. */
  nodes?: number;
  /** Extra CLI args for a locally started target (the suite's `serverWorkers` as the service's `--workers N`). */
  serviceArgs?: string[];
  signal: AbortSignal;
  log(line: string): void;
  progress(p: Record<string, unknown>): void;
}

/** The budget a step is judged against (seeds/000: >= 99% delivered, worst p99 <= 100 ms). */
export interface Budget {
  minDeliveredPct: number;
  maxP99Ms: number;
}

export interface StepResult {
  /** What was stepped, e.g. `{ connections: 20000 }` or `{ publishRate: 4000 }`. */
  step: Record<string, number>;
  pass: boolean;
  /** Why a step failed the budget (or why the walk stopped here). */
  reason?: string;
  /** Scenario-specific figures: deliveriesPerSec, bytesPerConnection, subscribedPct, stopMs, ... */
  metrics: Record<string, number | string | boolean | null>;
  /** From the one DeliveryLedger (never a frame count). */
  ledger?: LedgerTotals;
  /** From the one LatencyRecorder; `encoded` lets shards and loader processes merge exactly. */
  latency?: LatencyReport;
  latencyEncoded?: EncodedLatency;
}

/** A validity flag whose code may be a scenario's own (RIG_LIMIT, SOAK_TOO_SHORT, ...). */
export type ScenarioValidityFlag = Omit<ValidityFlag, 'code'> & { code: string };

export interface ScenarioResult {
  scenario: ScenarioId;
  title: string;
  target: string;
  startedAt: string;
  params: Record<string, unknown>;
  budget?: Budget;
  steps: StepResult[];
  /** The scenario's one figure for the side-by-side table (e.g. best deliveries/s within budget). */
  headline: { name: string; value: number | null; unit: string; higherIsBetter: boolean };
  /** S2 and stepped scenarios: what stopped the walk (connect-rate bound, memory, fd limit, crash, the rig, budget). */
  failureMode?: string;
  /** Rig and target health seen during the run (loop lag, fd/port limits, CPU shares). */
  validity: { valid: boolean; flags: ScenarioValidityFlag[] };
  /** What this figure does not show (e.g. loader and server share this machine's two cores). */
  notShown: string[];
  /** Scenario-specific data its own `sections()` draws from (the soak's health series and rule verdicts); JSON-serialisable. */
  detail?: Record<string, unknown>;
}

/**
 * A scenario as the suite holds it, whatever its options' type: `bind` takes the values of the
 * suite's one parse and returns the scenario with its typed options fixed, so planning and
 * running need no cast.
 */
export interface Scenario {
  id: ScenarioId;
  title: string;
  /** Its knobs under the suite's names (`s1Counts`, `sweepLoaderCounts`): the CLI, env and HTTP accept them. */
  options: OptionTable;
  bind(values: Readonly<Record<string, unknown>>): BoundScenario;
  /**
   * This scenario's report sections for one result per target (capacity steps with the budget
   * line, soak health series, ...). The suite's report page concatenates them in scenario order.
   */
  sections(results: readonly ScenarioResult[]): Section[];
}

export interface BoundScenario extends Pick<Scenario, 'id' | 'title'> {
  /** The typed options, echoed as a failed run's params. */
  opts: object;
  /** Rough wall time, for Retry-After and the job's ETA. */
  plannedSec: number;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

export interface ScenarioModule<O extends object> extends Scenario {
  /** Standalone use (tests, the loader CLI): the same table and checks as the suite's parse, bare or prefixed names. */
  parse(src: Record<string, unknown>): O;
  run(ctx: ScenarioContext, o: O): Promise<ScenarioResult>;
}
