// The layer table of docs/architecture.md, enforced: an import may only point down (or sideways,
// within its own layer), never up, and nothing may form a cycle: not of files, not of folders.
// `npm run layers` prints the violations; test/repo/layers.test.ts fails on any.
//
// Layers, top to bottom:
//   entry    src/cli/**, src/bin.ts, src/server.ts, src/runtime/** (Deps, and the steps the service runs)
//   http     src/app.ts, src/http/**
//   engine   src/engine/**, src/eval/** (the harness: the model mode will drive the pipeline)
//   steps    src/steps/**
//   domain   src/tasks, src/accounts, src/workspaces, src/billing, src/feedback, src/memory, src/repos, src/sites,
//            src/webhooks, src/triggers, src/audit (inside it, folders import one way: no-folder-cycle below)
//   adapters src/llm, src/scm, src/checkout, src/sandbox, src/environments, src/test-runs,
//            src/validator, src/locator, src/edits, src/outbound, src/queue, src/events, src/processes
//   base     src/db, src/config, src/secrets, src/errors.ts, src/clock.ts, src/ids.ts, src/logger.ts,
//            src/metrics, src/step-contract, src/text
// src/deps.ts stands outside the table: it is the type-only aggregate every layer receives, so
// any layer may import it as a type, and it may import (as types) from any layer.

const layer = {
  entry: '^src/(cli/|runtime/|(bin|server)\\.ts$)',
  http: '^src/(app\\.ts$|http/)',
  engine: '^src/(engine|eval)/',
  steps: '^src/steps/',
  domain: '^src/(tasks|accounts|workspaces|billing|feedback|memory|repos|sites|webhooks|triggers|audit)/',
  adapters: '^src/(llm|scm|checkout|sandbox|environments|test-runs|validator|locator|edits|outbound|queue|events|processes)/',
  base: '^src/(db/|metrics/|step-contract/|text/|config/|secrets/|(errors|clock|ids|logger)\\.ts$)',
};
const order = ['entry', 'http', 'engine', 'steps', 'domain', 'adapters', 'base'];

/** One rule per layer below the top: it may not import any layer above it. */
function upwardRule(name) {
  const above = order.slice(0, order.indexOf(name)).map((n) => layer[n]);
  return {
    name: `${name}-imports-only-below`,
    severity: 'error',
    comment: `${name} may import only ${order.slice(order.indexOf(name)).join(', ')} (not ${order
      .slice(0, order.indexOf(name))
      .join(', ')})`,
    from: { path: layer[name] },
    to: { path: above },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...order.slice(1).map(upwardRule),
    {
      name: 'deps-imported-as-type-only',
      severity: 'error',
      comment: 'src/deps.ts is a type aggregate: import it with `import type` only',
      from: { path: '^src/' },
      to: { path: '^src/deps\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'deps-imports-types-only',
      severity: 'error',
      comment: 'src/deps.ts imports only types, so it pulls no code of any layer into the one importing it',
      from: { path: '^src/deps\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-file-in-a-layer',
      severity: 'error',
      comment: 'every file under src/ belongs to a layer of the table above (add new folders to it)',
      from: { path: '^src/', pathNot: [...Object.values(layer), '^src/deps\\.ts$'] },
      to: {},
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import cycles (those through the type-only src/deps.ts carry no code, so they do not count)',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { pathNot: '^src/deps\\.ts$' } },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'no cycles between folders either: inside a layer, folders import one way (a folder counts with its subfolders)',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'web-imports-nothing-from-src',
      severity: 'error',
      comment: 'the panel (web/) talks to the service over HTTP only; it shares no code with src/',
      from: { path: '^web/' },
      to: { path: '^src/' },
    },
    {
      name: 'steps-report-through-the-store',
      severity: 'error',
      comment: "steps report their progress with helpers.report (the step loop's store), never by writing the task's log",
      from: { path: '^src/steps/' },
      to: { path: '^src/tasks/task-logs\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^dist/' },
    // Type imports count as imports: a layer may not reach up even for a type (except src/deps.ts).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
