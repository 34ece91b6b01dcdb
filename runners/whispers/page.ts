import { fmtInt } from '../../engine/pages/charts/common.ts';
import { deliveryReport } from '../../engine/pages/delivery.ts';
import type { ReportMeta, ReportModel } from '../../engine/pages/types.ts';
import type { WhispersResult } from './result.ts';

export function whispersReport(results: readonly WhispersResult[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  return deliveryReport(r, meta, {
    title: `Whispers run: ${r.target}`,
    subtitle: `${fmtInt(r.clients)} clients in ${fmtInt(r.rooms)} rooms, a whisper every ${r.whisperIntervalMs} ms`,
    seed: null,
    extraRows: [['whispers sent / received / expected', `${fmtInt(r.whispersSent)} / ${fmtInt(r.whispersReceived)} / ${fmtInt(r.expectedReceived)}`]],
  });
}
