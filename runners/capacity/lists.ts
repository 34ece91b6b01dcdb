import { ReboundError } from '../../lib/errors.ts';

/** RR_ERR_OPTION_INVALID naming the option: how the suite's and the soak's option checks refuse a value. */
export const invalidOption = (option: string, message: string) => new ReboundError('RR_ERR_OPTION_INVALID', message, { details: { option } });

/** Comma-separated positive integers for a list option (`10000,20000`), each within [min, max]. */
export function intList(option: string, raw: unknown, min: number, max: number, maxItems = 16): number[] {
  const s = String(raw);
  if (!/^\d+(,\d+)*$/.test(s)) throw invalidOption(option, `option "${option}" must be comma-separated integers (got ${JSON.stringify(s)})`);
  const out = s.split(',').map(Number);
  if (out.length > maxItems) throw invalidOption(option, `option "${option}" takes at most ${maxItems} values (got ${out.length})`);
  for (const n of out) if (n < min || n > max) throw invalidOption(option, `option "${option}": each value must be in ${min}..${max} (got ${n})`);
  return out;
}
