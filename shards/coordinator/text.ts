/** Shard text is data: it reaches our terminal only through the tree's one escape (lib/escape.ts). */
export { escapeControl as safeText } from '../../lib/escape.ts';
