import { Type } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../accounts/authenticate.js';
import type { Deps } from '../deps.js';
import { caller } from './auth.js';
import { errorResponses } from './errors.js';
import { described } from './schema-parts.js';

/** A GET that answers the caller's own records of one kind: provider keys, tokens, webhook endpoints. */
export interface OwnList<Row> {
  url: string;
  tag: string;
  operationId: string;
  summary: string;
  /** What the 200 answer is, in the document's words. */
  answer: string;
  /** The named schema of one record, as src/http/components.ts registers it. */
  item: string;
  /** The records: the workspace's (keys, endpoints) or the account's own (tokens). */
  list: (deps: Deps, auth: AuthContext) => Promise<Row[]>;
  /** One record's wire shape (its presenter, beside its schema in the resource's route file). */
  present: (row: Row) => unknown;
}

/** Registers the route. Full access: a demo token may not list what only a signed-up account keeps. */
export function getOwnList<Row>(app: FastifyInstance, deps: Deps, route: OwnList<Row>): void {
  app.get(
    route.url,
    {
      config: { access: 'full' },
      schema: {
        tags: [route.tag],
        operationId: route.operationId,
        summary: route.summary,
        response: {
          200: described(route.answer, Type.Array(Type.Ref(route.item))),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => (await route.list(deps, caller(request))).map(route.present),
  );
}
