import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { count, eq, sql } from 'drizzle-orm';
import { ping } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { registerDatabaseGauges } from '../../metrics/registry.js';
import { SANDBOX_FEATURES } from '../../sandbox/denials.js';
import type { SandboxReport } from '../../sandbox/types.js';
import { described, StringEnum } from '../schema-parts.js';

const SandboxView = Type.Object(
  {
    kind: StringEnum(['bubblewrap', 'unsafe-host', 'unavailable'] as const, {
      description:
        'bubblewrap: isolated; unsafe-host: on the host, development only; unavailable: repository commands are refused',
    }),
    version: Type.Optional(Type.String({ description: 'bubblewrap version' })),
    cgroups: StringEnum(['v1', 'v2', 'none'] as const),
    memory_limit: Type.Boolean({ description: 'limits.memory_bytes is enforced (memory cgroup)' }),
    process_limit: Type.Boolean({ description: 'limits.max_processes is enforced (pids cgroup)' }),
    network_for_setup: Type.Boolean({ description: 'the dependency-install phase may use the network' }),
    setup_network: StringEnum(['proxy', 'off', 'host'] as const, {
      description:
        'how it may: proxy, through the egress proxy to the package registries only; off, not at all; host, the host’s whole network (unsafe)',
    }),
    limits: Type.Object({
      timeout_ms: Type.Integer(),
      cpu_seconds: Type.Integer(),
      memory_bytes: Type.Integer(),
      max_processes: Type.Integer(),
      file_size_bytes: Type.Integer(),
      open_files: Type.Integer(),
      output_bytes: Type.Integer(),
    }),
    problem: Type.Optional(Type.String({ description: 'why repository commands cannot run' })),
    denied: Type.Optional(
      Type.Array(StringEnum(SANDBOX_FEATURES), {
        description:
          'the sandbox features the host (a container runtime) denies: user_namespaces, proc_mount, hostname, network_namespace, ' +
          'mounts make the sandbox unavailable (problem says how to allow them); cgroups alone leaves it running ' +
          'without its memory and process limits',
      }),
    ),
  },
  { description: 'Where repository commands run and the per-command limits in force' },
);

const ToolchainsView = Type.Record(Type.String(), Type.String(), {
  description:
    'The toolchains found inside the sandbox, by name (python, venv, pytest, node, npm, pnpm, yarn, go, cargo, java, ' +
    'maven, gradle, tox, make) with their versions; one not listed is not there. Absent while the start-up probe runs.',
});

function sandboxView(report: SandboxReport) {
  const { limits } = report;
  return {
    kind: report.kind,
    ...(report.version ? { version: report.version } : {}),
    cgroups: report.cgroups,
    memory_limit: report.memoryLimit,
    process_limit: report.processLimit,
    network_for_setup: report.networkForSetup,
    setup_network: report.setupNetwork,
    limits: {
      timeout_ms: limits.timeoutMs,
      cpu_seconds: limits.cpuSeconds,
      memory_bytes: limits.memoryBytes,
      max_processes: limits.maxProcesses,
      file_size_bytes: limits.fileSizeBytes,
      open_files: limits.openFiles,
      output_bytes: limits.outputBytes,
    },
    ...(report.problem ? { problem: report.problem } : {}),
    ...(report.denied?.length ? { denied: report.denied } : {}),
  };
}

function withToolchains(deps: Deps): { toolchains?: Record<string, string> } {
  void deps.toolchains.start();
  const found = deps.toolchains.current();
  return found ? { toolchains: found as Record<string, string> } : {};
}

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'getHealth',
        summary: 'Liveness, database reachability and the sandbox',
        description:
          '503 when the database does not answer. The sandbox is reported, not judged: an unavailable sandbox fails validations, not health.',
        security: [],
        response: {
          200: described(
            'the service is up and its database answers',
            Type.Object({
              ok: Type.Boolean(),
              ts: Type.Integer({ description: 'epoch milliseconds' }),
              database: Type.String(),
              sandbox: SandboxView,
              toolchains: Type.Optional(ToolchainsView),
            }),
          ),
          503: described(
            'the database does not answer',
            Type.Object({
              ok: Type.Boolean(),
              ts: Type.Integer(),
              database: Type.String(),
              sandbox: SandboxView,
              toolchains: Type.Optional(ToolchainsView),
            }),
          ),
        },
      },
    },
    async (_request, reply) => {
      const ok = await ping(deps.db);
      return reply.status(ok ? 200 : 503).send({
        ok,
        ts: deps.clock.now().getTime(),
        database: deps.dbKind,
        sandbox: sandboxView(deps.sandbox.report()),
        // Asked once; the first health call starts the probe where start-up did not (tests, `emend serve` without it).
        ...withToolchains(deps),
      });
    },
  );

  app.get(
    '/metrics',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        security: [],
        produces: ['text/plain'],
        response: {
          200: described(
            'the metrics, in the Prometheus text format',
            Type.String({ description: 'Prometheus text exposition format' }),
          ),
        },
      },
    },
    async (_request, reply) => {
      const body = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(body);
    },
  );
};

/** Wires the database-backed gauges once per app. */
export function registerTaskGauges(deps: Deps) {
  registerDatabaseGauges(deps.metrics, async () => {
    const rows = await deps.db
      .select({
        status: tasks.status,
        taskType: tasks.taskType,
        mode: tasks.mode,
        count: count(),
        cost: sql<string>`coalesce(sum(${tasks.costUsd}), 0)`,
      })
      .from(tasks)
      .groupBy(tasks.status, tasks.taskType, tasks.mode);
    const queueDepth = await deps.queue.depth().catch(() => 0);
    const [merged] = await deps.db.select({ n: count() }).from(tasks).where(eq(tasks.prMerged, true));
    return {
      tasks: rows,
      costUsd: rows.reduce((sum, r) => sum + Number(r.cost), 0),
      queueDepth,
      prsMerged: merged?.n ?? 0,
    };
  });
}
