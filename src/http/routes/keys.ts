import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { checkBaseUrl, deleteProviderKey, listProviderKeys, saveProviderKey } from '../../workspaces/provider-keys.js';
import { CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN, LLM_PROVIDERS, type LlmProvider } from '../../config/llm.js';
import type { Deps } from '../../deps.js';
import { checkProviderKey } from '../../llm/list-models.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { getOwnList } from '../own-list.js';
import { Nullable, StringEnum, Timestamp, Url, described } from '../schema-parts.js';
import type { providerKeys } from '../../db/schema.js';
import { audited } from '../audit.js';

// The provider-key resource's wire shape (ProviderKey, also in GET /v1/me's api_keys) and its presenter.

const ProviderEnum = StringEnum(LLM_PROVIDERS);

export const ProviderKey = Type.Object(
  {
    provider: StringEnum(LLM_PROVIDERS),
    last4: Type.String(),
    base_url: Nullable(Url()),
    default_model: Nullable(Type.String()),
    context_window: Nullable(Type.Integer({ minimum: 1 })),
    created_at: Timestamp,
  },
  { $id: 'ProviderKey' },
);

/** A saved provider key, metadata only (ProviderKey). */
export function providerKeyJson(k: typeof providerKeys.$inferSelect) {
  return {
    provider: k.provider,
    last4: k.last4,
    base_url: k.baseUrl,
    default_model: k.defaultModel,
    context_window: k.contextWindow,
    created_at: k.createdAt.toISOString(),
  };
}

/** This resource's named schemas, for src/http/components.ts. */
export const keySchemas = [ProviderKey];

const ApiKey = Type.String({ minLength: 1, maxLength: 500, description: 'the provider secret; never returned' });
const BaseUrl = Url({
  maxLength: 500,
  description: 'override for an OpenAI-compatible server (Ollama, vLLM, a gateway)',
});
const ContextWindow = Type.Integer({
  minimum: CONTEXT_WINDOW_MIN,
  maximum: CONTEXT_WINDOW_MAX,
  description:
    "the model's context window in tokens (input and output); prompts are sized to it and one that " +
    'cannot fit fails before the call. Needed for a model the service does not know (a local one)',
});

export const keyRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/keys',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'saveProviderKey',
        summary: 'Save (or replace) a provider key, encrypted',
        body: Type.Object(
          {
            provider: ProviderEnum,
            api_key: ApiKey,
            base_url: Type.Optional(BaseUrl),
            default_model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            context_window: Type.Optional(ContextWindow),
          },
          {
            additionalProperties: false,
            examples: [
              { provider: 'anthropic', api_key: 'sk-ant-…', default_model: 'claude-sonnet-4-5' },
              {
                provider: 'openai',
                api_key: 'ollama',
                base_url: 'http://ollama.internal:11434/v1',
                default_model: 'qwen2.5-coder:32b',
                context_window: 32768,
              },
            ],
          },
        ),
        response: {
          201: described('the saved key, metadata only', Type.Ref('ProviderKey')),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const row = await audited(deps, request, (d) => saveProviderKey(d, caller(request).workspace.id, request.body), {
        action: 'key.added',
        targets: { provider: request.body.provider },
      });
      return reply.status(201).send(providerKeyJson(row));
    },
  );

  getOwnList(app, deps, {
    url: '/me/keys',
    tag: 'account',
    operationId: 'listProviderKeys',
    summary: 'Saved provider keys, metadata only',
    answer: 'the saved keys, metadata only',
    item: 'ProviderKey',
    list: (d, auth) => listProviderKeys(d, auth.workspace.id),
    present: providerKeyJson,
  });

  app.delete(
    '/me/keys/:provider',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'deleteProviderKey',
        summary: 'Delete a saved provider key',
        params: Type.Object({ provider: ProviderEnum }),
        response: {
          200: described('the key is deleted', Type.Object({ deleted: Type.Boolean(), provider: Type.String() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      await audited(deps, request, (d) => deleteProviderKey(d, caller(request).workspace.id, request.params.provider), {
        action: 'key.removed',
        targets: { provider: request.params.provider },
      });
      return { deleted: true, provider: request.params.provider };
    },
  );

  app.post(
    '/me/keys/test',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'testProviderKey',
        summary: "Check a provider key against the provider's list-models endpoint",
        body: Type.Object(
          { provider: ProviderEnum, api_key: ApiKey, base_url: Type.Optional(BaseUrl) },
          { additionalProperties: false, examples: [{ provider: 'openai', api_key: 'sk-…' }] },
        ),
        response: {
          200: described(
            "the provider's answer: ok with the number of models, or the error",
            Type.Union([
              Type.Object({ ok: Type.Literal(true), models: Type.Integer() }),
              Type.Object({ ok: Type.Literal(false), error: Type.String() }),
            ]),
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const provider: LlmProvider = request.body.provider;
      const own = checkBaseUrl(request.body.base_url);
      // The caller's own base_url goes through the address policy (a refusal is a 400); the operator's does not.
      const fetchImpl = own ? deps.outbound.fetchFor('base_url') : deps.fetch;
      return checkProviderKey(
        fetchImpl,
        provider,
        own ?? deps.config.providerBaseUrls[provider],
        request.body.api_key.trim(),
      );
    },
  );
};
