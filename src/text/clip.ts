/** How `clip` marks a cut and what it does to the text first. */
export interface ClipOptions {
  /**
   * Put where the text was cut. Default: a line saying where (`\n… (cut at N characters)`), so a
   * model reading a prompt knows the text goes on.
   */
  marker?: string;
  /** Collapse each run of whitespace to one space and trim, for text quoted inside a one-line message. */
  oneLine?: boolean;
  /** Count the marker within `max`, so the result is never longer than `max`. */
  markerWithinMax?: boolean;
}

/** For a value quoted in a one-line message (site check findings): `…` ends it, within `max`. */
export const ONE_LINE: ClipOptions = { oneLine: true, marker: '…', markerWithinMax: true };

/** Shortens `text` to `max` characters (plus the marker unless `markerWithinMax`); shorter text is unchanged. */
export function clip(text: string, max: number, options: ClipOptions = {}): string {
  const body = options.oneLine ? text.replace(/\s+/g, ' ').trim() : text;
  if (body.length <= max) return body;
  const marker = options.marker ?? `\n… (cut at ${max} characters)`;
  return body.slice(0, options.markerWithinMax ? max - marker.length : max) + marker;
}
