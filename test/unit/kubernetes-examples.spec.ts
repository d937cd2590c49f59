import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PLATFORM_POD_LABEL } from '../../src/modules/deployment-runtime/kubernetes-manifests.js';
import { validateManifest } from '../support/kubernetes-schemas.js';

/**
 * The example manifests of `docker/kubernetes/` (this service on a cluster, with a worker) are
 * valid Kubernetes, and the Role they grant is the one docs/deployments.md gives and the service
 * needs.
 */
const DIR = path.join(process.cwd(), 'docker/kubernetes');
const documents = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8')).map((doc) => ({
      file,
      object: doc.toJS() as { kind: string; metadata: { name: string }; rules?: unknown },
    })),
  );

describe('docker/kubernetes', () => {
  it('holds only objects valid for their kinds, with no unknown field', () => {
    expect(documents.length).toBeGreaterThan(5);
    for (const { file, object } of documents) {
      expect([file, object.kind, validateManifest(object)]).toEqual([file, object.kind, []]);
    }
  });

  it('grants the Role docs/deployments.md gives: reconciling, and reading pods and logs', () => {
    const role = documents.find((d) => d.object.kind === 'Role')!.object;
    const docs = fs.readFileSync(path.join(process.cwd(), 'docs/deployments.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Permissions\n'));
    const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(section)![1];
    const documented = parseAllDocuments(yamlBlock)
      .map((d) => d.toJS() as { kind: string; rules?: unknown })
      .find((o) => o.kind === 'Role')!;
    expect(role.rules).toEqual(documented.rules);
    const verbsOn = (group: string, resource: string) =>
      (role.rules as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>)
        .filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
        .flatMap((r) => r.verbs);
    for (const [group, resource] of [
      ['apps', 'deployments'],
      ['', 'services'],
      ['', 'secrets'],
      ['networking.k8s.io', 'networkpolicies'],
    ]) {
      // Server-side apply creates what is missing; deletes, lists and watches follow.
      expect(verbsOn(group, resource)).toEqual(
        expect.arrayContaining(['get', 'list', 'watch', 'create', 'patch', 'delete']),
      );
    }
    expect(verbsOn('', 'pods/log')).toContain('get');
  });

  it('labels this service’s pods as the deployments’ NetworkPolicies admit them', () => {
    const workloads = documents.filter(
      (d) => d.object.kind === 'StatefulSet' || d.object.kind === 'Deployment',
    );
    expect(workloads.length).toBeGreaterThan(0);
    for (const { object } of workloads) {
      const labels = (
        object as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }
      ).spec.template.metadata.labels;
      expect(labels).toMatchObject(PLATFORM_POD_LABEL);
    }
  });
});
