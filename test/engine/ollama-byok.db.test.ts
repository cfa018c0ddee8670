import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import { type OllamaDouble, startOllamaDouble } from '../support/scripted-model/ollama.js';

// An account's key points at an Ollama server that keeps its default context: the task's first
// model step fails before any chat request, saying how to give the model a context.
let svc: ModelService;
let ollama: OllamaDouble;

beforeAll(async () => {
  svc = await startModelService({ EMEND_OUTBOUND_ALLOW: '127.0.0.1' }, 'openai');
  svc.h.github.createRepo('acme', 'calc', { files: CALC_REPO });
  ollama = await startOllamaDouble({ model: 'qwen2.5-coder:14b' });
});
afterAll(async () => {
  await ollama.close();
  await svc.close();
});

describe('a BYOK key at an Ollama server', { timeout: 150_000 }, () => {
  it('whose context cannot be confirmed fails the planner before the server can cut the prompt', async () => {
    const { h } = svc;
    const { auth } = await newAccount(h, { plan: 'free' });
    const saved = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: {
        provider: 'openai',
        api_key: 'ollama-needs-no-key',
        base_url: ollama.url,
        default_model: 'qwen2.5-coder:14b',
        context_window: 32_768,
      },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const byok = await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } });
    expect(byok.statusCode).toBe(200);
    const { task } = await runFixTask(h, auth, `${h.github.webUrl}/acme/calc`, 'failed');
    expect(task.error).toMatch(
      /^planner failed: http:\/\/127\.0\.0\.1:\d+\/v1 is an Ollama server \(0\.12\.6\); .*PARAMETER num_ctx 32768/,
    );
    expect(ollama.paths).toEqual(['GET /api/version', 'POST /api/show', 'GET /api/ps']);
    expect(ollama.seen).toEqual([]);
    expect(task.tokens_total).toBe(0);
  });
});
