/** Shard text is data: it reaches our terminal only through the tree's one escape (lib/escape.ts). */
export { safeText } from '../../lib/escape.ts';
