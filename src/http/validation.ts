import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { findUnstorableText } from './storable-text.js';

type Check = ((data: unknown) => boolean | { value: unknown }) & { errors?: ErrorObject[] | null };

/**
 * Bodies are validated strictly (no type coercion: a prompt of 123 is a bad request, not
 * "123"); query strings and path parameters arrive as text and are coerced. Every part that
 * has a schema is then checked for text the database cannot hold (src/http/storable-text.ts),
 * so a NUL or a lone surrogate is a 400 naming its field, never a failed query.
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
      // the field's description says in words (src/http/errors.ts); the data is dropped below.
      verbose: true,
    });
    addFormats.default(ajv);
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
        check.errors = validate.errors?.map(({ data: _data, ...rest }) => rest) ?? null;
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
