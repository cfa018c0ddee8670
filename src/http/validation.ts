import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';


/**
 * Bodies are validated strictly (no type coercion: a prompt of 123 is a bad request, not
 * "123"); query strings and path parameters arrive as text and are coerced.
 */
export function installValidators(app: FastifyInstance) {
  const make = (coerceTypes: boolean) => {
    const ajv = new Ajv.default({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
    addFormats.default(ajv);
    return ajv;
  };
  const strict = make(false);
  const coercing = make(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart !== 'body') return coercing.compile(schema);
    const validate = strict.compile(schema);
    // No body at all is judged as an empty object: fine where every field is optional,
    // and otherwise the error names the first missing field rather than "must be object".
    const check = (data: unknown) => {
      const ok = validate(data ?? {});
      (check as unknown as { errors: typeof validate.errors }).errors = validate.errors;
      return ok;
    };
    return check;
  });
}
