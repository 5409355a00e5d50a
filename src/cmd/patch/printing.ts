/** The printers of `orch patch`, as kubectl's PrintFlags builds them: one per object and operation. */
import {readFileSync} from 'node:fs';
import {createPrinter, type Printer} from '../../printers/index.js';
import {resourceName} from '../../printers/name.js';
import {toKubectlYaml} from '../../printers/yaml.js';
import {UserError} from '../../lib/errors.js';
import type {PatchDependencies} from './run.js';
import type {PatchOptions} from './options.js';

function printerFor(o: PatchOptions, operation: string): Printer {
  const made = createPrinter(
    o.output,
    {
      allowMissingTemplateKeys: o.allowMissingTemplateKeys,
      showManagedFields: o.showManagedFields,
      template: o.template,
      operation,
    },
    (path) => readFileSync(path, 'utf8'),
  );
  if ('error' in made) throw new UserError(made.error);
  return made.printer;
}

export const printerDependencies: PatchDependencies = {
  printerFor,
  objectName: (object) => resourceName(object as Record<string, unknown>),
  toYaml: (object) => toKubectlYaml(object),
};
