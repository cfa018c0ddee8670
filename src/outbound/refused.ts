import { AppError } from '../errors.js';

/**
 * A user-given URL would reach an address the outbound policy refuses. An AppError
 * `bad_request`, so an HTTP route that meets it answers 400 with its message; a model call that
 * meets it fails its step with the same words, without retrying.
 */
export class OutboundRefused extends AppError {
  override name = 'OutboundRefused';

  constructor(
    readonly subject: string,
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    const where = host === address ? '' : ` (${host})`;
    super(
      'bad_request',
      `${subject}${where} resolves to ${address}, ${range}; the operator can allow it with EMEND_OUTBOUND_ALLOW`,
    );
  }

  /** The same refusal, naming what the caller calls the URL (`base_url`). */
  about(subject: string): OutboundRefused {
    return new OutboundRefused(subject, this.host, this.address, this.range);
  }
}

/** The refusal inside an error a fetch threw (undici wraps connect errors in TypeError('fetch failed')). */
export function refusalIn(err: unknown): OutboundRefused | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof OutboundRefused) return e;
  }
  return undefined;
}
