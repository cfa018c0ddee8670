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
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
