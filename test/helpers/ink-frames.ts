/** Reading Ink frames in tests: the text a person sees, and the colors around a piece of it. */
export const SGR = /\x1b\[[0-9;]*m/g;
export const GREEN = '32';
export const YELLOW = '33';
export const RED = '31';
export const BOLD = '1';

/** The frame as a person reads it, without color codes. */
export function plain(frame: string): string {
  return frame.replace(SGR, '');
}

/** The SGR codes (e.g. ['1', '31']) that directly precede the first occurrence of `text`. */
export function stylesOf(frame: string, text: string): string[] {
  const escaped = text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`((?:\x1b\\[[0-9;]*m)+)${escaped}`).exec(frame);
  return match ? [...match[1]!.matchAll(/\x1b\[([0-9;]*)m/g)].map((m) => m[1]!) : [];
}
