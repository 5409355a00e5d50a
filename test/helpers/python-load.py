# The Python kubernetes client (Debian's python3-kubernetes) as an operator written in Python uses
# it (HTTP/1.1 keep-alive through urllib3): ConfigMap creates of the given sizes, with a watch of them
# open in a thread (from a list's resourceVersion, as a reflector starts; without timeout_seconds the
# client watches again from the last resourceVersion whenever the server ends the stream). Prints
# JSON: per size the names acknowledged, the errors, and the names the watch never reported ADDED.
# Usage: python3 test/helpers/python-load.py <orchconfig> <namespace> <prefix> <count> <size,...>
import json, sys, threading, time
from kubernetes import client, config, watch

orchconfig, namespace, prefix, count, sizes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), [int(s) for s in sys.argv[5].split(',')]
config.load_kube_config(config_file=orchconfig)
label = prefix + '-load'
seen = set()
ready = threading.Event()
w = watch.Watch()

def watcher():
    v1 = client.CoreV1Api()
    start = v1.list_namespaced_config_map(namespace, label_selector='traffic=' + label).metadata.resource_version
    ready.set()
    for event in w.stream(v1.list_namespaced_config_map, namespace, label_selector='traffic=' + label, resource_version=start):
        if event['type'] == 'ADDED':
            seen.add(event['object'].metadata.name)

threading.Thread(target=watcher, daemon=True).start()
ready.wait()
time.sleep(0.5)
v1 = client.CoreV1Api()
results = []
for size in sizes:
    result = {'size': size, 'requests': 0, 'acknowledged': [], 'errors': {}}
    for i in range(count):
        name = '%s-%d-%d' % (prefix, size, i)
        result['requests'] += 1
        try:
            v1.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={'traffic': label}), data={'k': 'x' * size}))
            result['acknowledged'].append(name)
        except Exception as e:  # a connection error or an API refusal: both are counted, by kind
            kind = type(e).__name__ + ': ' + str(e)[:80]
            result['errors'][kind] = result['errors'].get(kind, 0) + 1
    results.append(result)
deadline = time.time() + 10
while time.time() < deadline and any(n not in seen for r in results for n in r['acknowledged']):
    time.sleep(0.05)
for r in results:
    r['watchMissing'] = [n for n in r['acknowledged'] if n not in seen]
w.stop()
print(json.dumps(results))
