import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serialize = ReturnType<ReturnType<SerializerFactory>>;

const defaultFactory = SerializerSelector();
const compiled = new Map<string, Serialize>();

/**
 * Fastify's own response-serializer factory (fast-json-stringify), remembering what it compiled:
 * an app built with the same response schemas and shared schemas as an earlier one in this process
 * reuses its serializers instead of compiling them again, which took about a second of CPU per
 * app. A serializer is a pure function of those schemas and options, so the key is their JSON.
 */
const cachingFactory: SerializerFactory = (externalSchemas, serializerOpts) => {
  const build = defaultFactory(externalSchemas, serializerOpts);
  const context = JSON.stringify([externalSchemas, serializerOpts ?? null]);
  return (route) => {
    const key = `${context}\n${JSON.stringify(route.schema)}`;
    let serialize = compiled.get(key);
    if (!serialize) {
      serialize = build(route);
      compiled.set(key, serialize);
    }
    return serialize;
  };
};

/** The schema controller test apps are built with (buildApp's `schemaController`). */
export const cachedSerializers: FastifyServerOptions['schemaController'] = {
  compilersFactory: { buildSerializer: cachingFactory },
};
