import { ReboundError } from '../../lib/errors.ts';

/** Comma-separated positive integers for a list option (`10000,20000`), each within [min, max]. */
export function intList(option: string, raw: unknown, min: number, max: number, maxItems = 16): number[] {
  const s = String(raw);
  if (!/^\d+(,\d+)*$/.test(s)) throw new ReboundError('RR_ERR_OPTION_INVALID', `option "${option}" must be comma-separated integers (got ${JSON.stringify(s)})`, { details: { option } });
  const out = s.split(',').map(Number);
  if (out.length > maxItems) throw new ReboundError('RR_ERR_OPTION_INVALID', `option "${option}" takes at most ${maxItems} values (got ${out.length})`, { details: { option } });
  for (const n of out) if (n < min || n > max) throw new ReboundError('RR_ERR_OPTION_INVALID', `option "${option}": each value must be in ${min}..${max} (got ${n})`, { details: { option } });
  return out;
}
