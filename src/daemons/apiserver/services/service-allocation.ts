/**
 * What a Service write takes from and gives back to the allocators (upstream's
 * pkg/registry/core/service/storage/alloc.go): cluster IPs per family (`None` for headless,
 * nothing for ExternalName) and node ports for NodePort and LoadBalancer services. Allocations made
 * for a write are undone when the write fails; addresses and ports a write gives up are released
 * only once it is stored.
 */
import {field, invalid, internalError, type FieldError} from '../../../api/status.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import type {WriteAllocation, AllocationResult} from '../rest/registry-store.js';
import {ClusterIPAllocator, IPAllocationError, type ServiceRef} from './ip-allocator.js';
import {familyOf, type IPFamily} from './ip-range.js';
import {NodePortAllocator, PortAllocationError} from './port-allocator.js';

type Undo = () => Promise<void>;

const specOf = (o: JsonObject): JsonObject => (isJsonObject(o.spec) ? o.spec : (o.spec = {}));
const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const refOf = (o: JsonObject): ServiceRef => {
  const meta = isJsonObject(o.metadata) ? o.metadata : {};
  return {namespace: String(meta.namespace ?? ''), name: String(meta.name ?? '')};
};

/** The cluster IPs a stored service holds (none for headless and ExternalName). */
export function clusterIPsOf(service: JsonObject): string[] {
  const spec = isJsonObject(service.spec) ? service.spec : {};
  if (spec.type === 'ExternalName') return [];
  const ips = strings(spec.clusterIPs);
  const all = ips.length ? ips : typeof spec.clusterIP === 'string' && spec.clusterIP ? [spec.clusterIP] : [];
  return all.filter((ip) => ip !== 'None' && ip !== '');
}

function needsNodePorts(spec: JsonObject): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

/** The node ports a stored service holds. */
export function nodePortsOf(service: JsonObject): number[] {
  const spec = isJsonObject(service.spec) ? service.spec : {};
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  return [...new Set(ports.flatMap((p) => (isJsonObject(p) && typeof p.nodePort === 'number' && p.nodePort > 0 ? [p.nodePort] : [])))];
}

export class ServiceAllocation implements WriteAllocation {
  constructor(
    private readonly ips: ClusterIPAllocator,
    private readonly ports: NodePortAllocator,
  ) {}

  private fail(service: JsonObject, errors: FieldError[]): never {
    throw invalid({group: '', kind: 'Service'}, refOf(service).name, errors);
  }

  /** The families a new service gets (upstream's initIPFamilyFields), or field errors. */
  private families(service: JsonObject, requestedIPs: string[]): IPFamily[] {
    const spec = specOf(service);
    const configured = this.ips.families();
    const errors: FieldError[] = [];
    let families = strings(spec.ipFamilies) as IPFamily[];
    requestedIPs.forEach((ip, i) => {
      const family = familyOf(ip);
      if (!family) errors.push(field.invalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
      else if (families[i] === undefined) families[i] = family;
      else if (families[i] !== family) errors.push(field.invalid(`spec.clusterIPs[${i}]`, ip, `expected an IP of family ${families[i]}`));
    });
    if (errors.length) this.fail(service, errors);
    if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = families.length === 2 ? 'RequireDualStack' : 'SingleStack';
    const policy = spec.ipFamilyPolicy;
    if (families.length === 0) families = [configured[0]!];
    if ((policy === 'PreferDualStack' || policy === 'RequireDualStack') && families.length === 1) {
      const other = configured.find((f) => f !== families[0]);
      if (other) families.push(other);
      else if (policy === 'RequireDualStack') this.fail(service, [field.invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services')]);
    }
    if (policy === 'SingleStack' && families.length > 1) {
      this.fail(service, [field.invalid('spec.ipFamilies', families, 'when spec.ipFamilyPolicy is SingleStack, at most one IP family may be specified')]);
    }
    families.forEach((family, i) => {
      if (!configured.includes(family)) errors.push(field.invalid(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
    });
    if (errors.length) this.fail(service, errors);
    spec.ipFamilies = families;
    return families;
  }

  /** Allocates the cluster IPs of a service that has none yet; returns how to give them back. */
  private async allocateIPs(service: JsonObject, dryRun: boolean): Promise<Undo> {
    const spec = specOf(service);
    if (spec.type === 'ExternalName') return async () => undefined;
    const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
    let requested = strings(spec.clusterIPs);
    if (requested.length === 0 && clusterIP) requested = [clusterIP];
    if (clusterIP && requested[0] !== clusterIP) {
      this.fail(service, [field.invalid('spec.clusterIPs[0]', requested[0], 'must match `spec.clusterIP`')]);
    }
    if (requested[0] === 'None') {
      // Headless: no address; the families still say which endpoints it selects.
      spec.clusterIP = 'None';
      spec.clusterIPs = ['None'];
      this.families(service, []);
      return async () => undefined;
    }
    const families = this.families(service, requested);
    const taken: string[] = [];
    const undo = async () => {
      if (!dryRun) for (const ip of taken) await this.ips.release(ip);
    };
    try {
      for (const [i, family] of families.entries()) {
        const wanted = requested[i];
        if (wanted) {
          try {
            taken.push(await this.ips.allocate(wanted, refOf(service), dryRun));
          } catch (error) {
            if (!(error instanceof IPAllocationError)) throw error;
            this.fail(service, [field.invalid('spec.clusterIPs', requested, `failed to allocate IP ${wanted}: ${error.message}`)]);
          }
        } else {
          try {
            taken.push(await this.ips.allocateNext(family, refOf(service), dryRun));
          } catch (error) {
            if (error instanceof IPAllocationError) throw internalError(new Error(`failed to allocate a serviceIP: ${error.message}`));
            throw error;
          }
        }
      }
    } catch (error) {
      await undo();
      throw error;
    }
    spec.clusterIP = taken[0]!;
    spec.clusterIPs = taken;
    return undo;
  }

  /** Allocates node ports for the ports that lack one and takes those given that `held` does not hold already. */
  private async allocatePorts(service: JsonObject, held: Set<number>, dryRun: boolean): Promise<Undo> {
    const spec = specOf(service);
    const ports = Array.isArray(spec.ports) ? spec.ports.filter(isJsonObject) : [];
    if (!needsNodePorts(spec)) {
      const errors = ports.flatMap((p, i) =>
        typeof p.nodePort === 'number' && p.nodePort !== 0 && spec.type === 'ClusterIP'
          ? [field.forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'")]
          : [],
      );
      if (errors.length) this.fail(service, errors);
      return async () => undefined;
    }
    if (spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
    if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
    const taken: number[] = [];
    const undo = async () => {
      if (!dryRun) for (const port of taken) await this.ports.release(port);
    };
    try {
      for (const [i, port] of ports.entries()) {
        const wanted = typeof port.nodePort === 'number' && port.nodePort > 0 ? port.nodePort : undefined;
        if (wanted !== undefined) {
          // One node port may serve the same port number for two protocols (TCP and UDP).
          if (held.has(wanted) || taken.includes(wanted)) continue;
          try {
            await this.ports.allocate(wanted, dryRun);
            taken.push(wanted);
          } catch (error) {
            if (!(error instanceof PortAllocationError)) throw error;
            this.fail(service, [field.invalid(`spec.ports[${i}].nodePort`, wanted, error.message)]);
          }
        } else {
          try {
            port.nodePort = await this.ports.allocateNext(dryRun);
            taken.push(port.nodePort);
          } catch (error) {
            if (error instanceof PortAllocationError) throw internalError(new Error(`failed to allocate a nodePort: ${error.message}`));
            throw error;
          }
        }
      }
    } catch (error) {
      await undo();
      throw error;
    }
    return undo;
  }

  async beforeCreate(service: JsonObject, dryRun: boolean): Promise<AllocationResult> {
    const undoIPs = await this.allocateIPs(service, dryRun);
    let undoPorts: Undo;
    try {
      undoPorts = await this.allocatePorts(service, new Set(), dryRun);
    } catch (error) {
      await undoIPs();
      throw error;
    }
    return {revert: async () => (await undoPorts(), await undoIPs()), commit: async () => undefined};
  }

  async beforeUpdate(service: JsonObject, current: JsonObject, dryRun: boolean): Promise<AllocationResult> {
    const spec = specOf(service);
    const old = specOf(current);
    const oldIPs = clusterIPsOf(current);
    // What the client left out keeps its allocated value (upstream's patchAllocatedValues).
    if (spec.type !== 'ExternalName' && old.type !== 'ExternalName') {
      if (!spec.clusterIP && old.clusterIP) spec.clusterIP = old.clusterIP;
      if (strings(spec.clusterIPs).length === 0 && Array.isArray(old.clusterIPs)) spec.clusterIPs = old.clusterIPs;
      if (spec.ipFamilies === undefined && old.ipFamilies !== undefined) spec.ipFamilies = old.ipFamilies;
      if (spec.ipFamilyPolicy === undefined && old.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = old.ipFamilyPolicy;
    }
    if (needsNodePorts(spec) && needsNodePorts(old)) {
      const oldPorts = Array.isArray(old.ports) ? old.ports.filter(isJsonObject) : [];
      for (const port of Array.isArray(spec.ports) ? spec.ports.filter(isJsonObject) : []) {
        if (port.nodePort !== undefined && port.nodePort !== 0) continue;
        const match = oldPorts.find((p) => p.port === port.port && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
        if (match && typeof match.nodePort === 'number') port.nodePort = match.nodePort;
      }
    }
    let undoIPs: Undo = async () => undefined;
    let releaseIPs: string[] = [];
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
      delete spec.ipFamilies;
      delete spec.ipFamilyPolicy;
      releaseIPs = oldIPs;
    } else if (old.type === 'ExternalName' || (oldIPs.length === 0 && old.clusterIP !== 'None')) {
      undoIPs = await this.allocateIPs(service, dryRun);
    } else {
      const next = strings(spec.clusterIPs).length ? strings(spec.clusterIPs) : [String(spec.clusterIP ?? '')];
      const before = old.clusterIP === 'None' ? ['None'] : oldIPs;
      if (next[0] !== before[0]) this.fail(service, [field.invalid('spec.clusterIPs[0]', next[0], 'may not change once set')]);
    }
    const oldPorts = new Set(needsNodePorts(old) ? nodePortsOf(current) : []);
    let undoPorts: Undo;
    try {
      undoPorts = await this.allocatePorts(service, oldPorts, dryRun);
    } catch (error) {
      await undoIPs();
      throw error;
    }
    const keptPorts = new Set(needsNodePorts(spec) ? nodePortsOf(service) : []);
    const releasePorts = [...oldPorts].filter((p) => !keptPorts.has(p));
    return {
      revert: async () => (await undoPorts(), await undoIPs()),
      commit: async () => {
        if (dryRun) return;
        for (const ip of releaseIPs) await this.ips.release(ip);
        for (const port of releasePorts) await this.ports.release(port);
      },
    };
  }

  async afterDelete(service: JsonObject): Promise<void> {
    for (const ip of clusterIPsOf(service)) await this.ips.release(ip);
    for (const port of nodePortsOf(service)) await this.ports.release(port);
  }
}
