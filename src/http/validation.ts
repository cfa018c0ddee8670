import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { dateTimeProblem, usableDateTime } from './date-time-format.js';
import { findUnstorableText } from './storable-text.js';

type Check = ((data: unknown) => boolean | { value: unknown }) & { errors?: ErrorObject[] | null };

/** An error with a clearer message where ajv's would mislead (a well-formed date-time out of range). */
function explained(error: ErrorObject, data: unknown): ErrorObject {
  const problem =
    error.keyword === 'format' && error.params.format === 'date-time' && typeof data === 'string'
      ? dateTimeProblem(data)
      : undefined;
  return problem ? { ...error, message: problem } : error;
}

/**
 * Bodies are validated strictly (no type coercion: a prompt of 123 is a bad request, not
 * "123"); query strings and path parameters arrive as text and are coerced. Every part that
 * has a schema is then checked for text the database cannot hold (src/http/storable-text.ts),
 * so a NUL or a lone surrogate is a 400 naming its field, never a failed query. The
 * `date-time` format also wants a time the database can hold (src/http/date-time-format.ts).
 */
export function installValidators(app: FastifyInstance) {
  const make = (coerceTypes: boolean) => {
    const ajv = new Ajv.default({
      coerceTypes,
      useDefaults: true,
      removeAdditional: false,
      allErrors: false,
      strict: false,
      // The failing keyword's schema comes with each error, so a pattern's refusal can quote what
      // the field's description says in words (src/http/errors.ts); the data is dropped below,
      // once it has explained a refusal.
      verbose: true,
    });
    addFormats.default(ajv);
    ajv.addFormat('date-time', { type: 'string', validate: usableDateTime });
    return ajv;
  };
  const strict = make(false);
  const coercing = make(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const isBody = httpPart === 'body';
    const validate = (isBody ? strict : coercing).compile(schema);
    const check: Check = (raw) => {
      // No body at all (or a JSON null) is judged as an empty object: fine where every field is
      // optional, and otherwise the error names the first missing field rather than "must be object".
      const data = isBody ? (raw ?? {}) : raw;
      if (!validate(data)) {
        check.errors = validate.errors?.map(({ data, ...rest }) => explained(rest, data)) ?? null;
        return false;
      }
      const bad = findUnstorableText(data);
      if (bad) {
        check.errors = [
          { instancePath: bad.path, schemaPath: '#', keyword: 'storableText', params: {}, message: bad.message },
        ];
        return false;
      }
      check.errors = null;
      // The handler gets the object that was validated (defaults applied), never undefined.
      return isBody ? { value: data } : true;
    };
    return check;
  });
}
