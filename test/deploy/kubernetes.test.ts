import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KUBECTL, available, requirements } from '../support/requirements.js';

// deploy/kubernetes rendered as `kubectl apply -k` would send it, each object checked offline
// against the Kubernetes API's schema (kubernetes-models' validators, generated from the
// OpenAPI document), then for what issue 46 asks of the deployment. Kubernetes' own schemas
// allow unknown fields (the API server refuses them under strict field validation), so a
// misspelt field the assertions below do not read would pass here: the assertions read every
// property the deployment depends on by its exact path.
const ROOT = join(import.meta.dirname, '../../deploy/kubernetes');
const OVERLAYS = ['production', 'small'];
const haveKubectl = available(requirements.kubectl());

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };
type Validating = { validate(): void };

const MODELS: Record<string, (m: Manifest) => Validating> = {
  'v1/ConfigMap': (m) => new ConfigMap(m as ConstructorParameters<typeof ConfigMap>[0]),
  'v1/Service': (m) => new Service(m as ConstructorParameters<typeof Service>[0]),
  'apps/v1/Deployment': (m) => new Deployment(m as ConstructorParameters<typeof Deployment>[0]),
  'policy/v1/PodDisruptionBudget': (m) =>
    new PodDisruptionBudget(m as ConstructorParameters<typeof PodDisruptionBudget>[0]),
  'autoscaling/v2/HorizontalPodAutoscaler': (m) =>
    new HorizontalPodAutoscaler(m as ConstructorParameters<typeof HorizontalPodAutoscaler>[0]),
  'networking.k8s.io/v1/Ingress': (m) => new Ingress(m as ConstructorParameters<typeof Ingress>[0]),
};

function render(dir: string): Manifest[] {
  const out = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', timeout: 30_000 });
  return parseAllDocuments(out).map((d) => d.toJSON() as Manifest);
}

/** Each object's schema errors, by kind and name; empty when all are valid. */
function schemaErrors(objects: Manifest[]): string[] {
  const errors: string[] = [];
  for (const o of objects) {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) {
      errors.push(`${o.apiVersion} ${o.kind} ${o.metadata.name}: no schema to check it against`);
      continue;
    }
    try {
      model(o).validate();
    } catch (err) {
      errors.push(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`);
    }
  }
  return errors;
}

const find = (objects: Manifest[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found as Record<string, any>;
};

describe.skipIf(!haveKubectl)('the Kubernetes manifests (deploy/kubernetes)', { timeout: 60_000 }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'emend-k8s-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const overlay of OVERLAYS) {
    describe(`overlay ${overlay}`, () => {
      // Rendered at the first test, not at collection: without kubectl the file is skipped, not failed.
      let objects: Manifest[] = [];
      let config: Record<string, string> = {};
      let api: Record<string, any> = {};
      let worker: Record<string, any> = {};
      beforeAll(() => {
        objects = render(join(ROOT, 'overlays', overlay));
        config = find(objects, 'ConfigMap', 'emend-config').data;
        api = find(objects, 'Deployment', 'emend-api');
        worker = find(objects, 'Deployment', 'emend-worker');
      });

      it('renders only objects valid against the Kubernetes schemas', () => {
        expect(objects.length).toBeGreaterThan(5);
        expect(schemaErrors(objects)).toEqual([]);
      });

      it('runs the API as serve --no-worker and the workers as worker, probed on /health and /ready', () => {
        const apiC = api.spec.template.spec.containers[0];
        expect(apiC.args).toEqual(['serve', '--no-worker']);
        expect(apiC.livenessProbe.httpGet.path).toBe('/health');
        expect(apiC.readinessProbe.httpGet.path).toBe('/ready');
        expect(apiC.livenessProbe.httpGet.port).toBe('http');
        expect(apiC.ports).toEqual([{ name: 'http', containerPort: Number(config.PORT) }]);
        expect(worker.spec.template.spec.containers[0].args).toEqual(['worker']);
        expect(config.HOST).toBe('0.0.0.0');
        const service = find(objects, 'Service', 'emend-api');
        expect(service.spec.selector).toEqual(api.spec.selector.matchLabels);
      });

      it('gives each pod more time to stop than the service takes to stop its work', () => {
        const grace = Number(config.EMEND_STOP_GRACE_SECONDS);
        expect(grace).toBeGreaterThan(0);
        for (const d of [api, worker])
          expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(grace);
      });

      it('has a PodDisruptionBudget selecting each Deployment', () => {
        for (const d of [api, worker]) {
          const pdb = find(objects, 'PodDisruptionBudget', d.metadata.name);
          expect(pdb.spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
          expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).toBeDefined();
        }
      });

      it('runs nothing privileged: non-root uid 10001, no escalation, every capability dropped', () => {
        for (const d of [api, worker]) {
          const pod = d.spec.template.spec;
          expect(pod.hostPID ?? false).toBe(false);
          expect(pod.hostNetwork ?? false).toBe(false);
          expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
          for (const c of pod.containers) {
            expect(c.securityContext.privileged ?? false).toBe(false);
            expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
            expect(c.securityContext.capabilities).toEqual({ drop: ['ALL'] });
            expect(c.resources.requests.cpu).toBeDefined();
            expect(c.resources.requests.memory).toBeDefined();
            expect(c.resources.limits.memory).toBeDefined();
          }
        }
      });

      it("gives the worker's sandbox an unmasked /proc only inside a user namespace of the pod's own", () => {
        const pod = worker.spec.template.spec;
        expect(pod.hostUsers).toBe(false);
        expect(pod.containers[0].securityContext.procMount).toBe('Unmasked');
        // The API runs no repository commands and keeps every default.
        expect(api.spec.template.spec.containers[0].securityContext.procMount).toBeUndefined();
        expect(api.spec.template.spec.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
        const data = pod.volumes.find((v: { name: string }) => v.name === 'data');
        expect(data.emptyDir ?? data.persistentVolumeClaim).toBeDefined();
        expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'data', mountPath: config.EMEND_DATA_DIR });
      });

      it('takes secrets only by reference: files of the Secret emend-secrets, read through *_FILE settings', () => {
        expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
        for (const d of [api, worker]) {
          const pod = d.spec.template.spec;
          const secrets = pod.volumes.find((v: { name: string }) => v.name === 'secrets');
          expect(secrets.secret.secretName).toBe('emend-secrets');
          const mount = pod.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'secrets');
          expect(mount.readOnly).toBe(true);
          for (const c of pod.containers) {
            expect(c.env ?? []).toEqual([]);
            expect(c.envFrom).toEqual([{ configMapRef: { name: 'emend-config' } }]);
          }
          for (const name of ['EMEND_SECRET_KEY_FILE', 'DATABASE_URL_FILE'])
            expect(config[name]?.startsWith(`${mount.mountPath}/`)).toBe(true);
        }
        for (const name of ['EMEND_SECRET_KEY', 'DATABASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY'])
          expect(config[name]).toBeUndefined();
      });
    });
  }

  it('production: workers scale on emend_queue_depth, and the Ingress streams events unbuffered over TLS', () => {
    const objects = render(join(ROOT, 'overlays', 'production'));
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'emend-worker');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'emend-worker' });
    expect(hpa.spec.metrics).toEqual([
      expect.objectContaining({
        type: 'External',
        external: expect.objectContaining({ metric: { name: 'emend_queue_depth' } }),
      }),
    ]);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
    const ingress = find(objects, 'Ingress', 'emend');
    expect(ingress.spec.tls[0].hosts).toEqual([ingress.spec.rules[0].host]);
    expect(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(
      Number(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']),
    ).toBeGreaterThanOrEqual(3600);
    expect(ingress.spec.rules[0].http.paths[0].backend.service.name).toBe('emend-api');
    expect(find(objects, 'ConfigMap', 'emend-config').data.EMEND_BASE_URL).toBe(
      `https://${ingress.spec.rules[0].host}`,
    );
  });

  it('small: one API node and one worker, not autoscaled', () => {
    const objects = render(join(ROOT, 'overlays', 'small'));
    expect(find(objects, 'Deployment', 'emend-api').spec.replicas).toBe(1);
    expect(find(objects, 'Deployment', 'emend-worker').spec.replicas).toBe(1);
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('fails a manifest that breaks the schema (a port given as a word where a number must be)', () => {
    const copy = join(scratch, 'kubernetes');
    cpSync(ROOT, copy, { recursive: true });
    const file = join(copy, 'base', 'api-deployment.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('containerPort: 3000', 'containerPort: three-thousand'));
    const errors = schemaErrors(render(join(copy, 'overlays', 'small')));
    expect(errors).toEqual([expect.stringContaining('containerPort must be integer')]);
  });
});
