import {Args} from '@oclif/core';
import {OrchCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {patchOptions} from '../options/patch.js';
import {patchMain} from '../cmd/patch/main.js';
import type {PatchResult} from '../cmd/patch/run.js';

export default class PatchCommand extends OrchCommand {
  static summary = 'Update fields of an object with a strategic merge patch, a JSON merge patch or a JSON patch.';
  static usage = ['patch (-f FILENAME | -k DIR | TYPE NAME) (-p PATCH | --patch-file FILE) [flags]'];
  static strict = false;
  static args = {
    type: Args.string({description: 'resource type (or TYPE/NAME)'}),
    name: Args.string({description: 'resource name'}),
  };
  static examples = [
    `<%= config.bin %> patch --local -f pod.json -p '{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}' -o json`,
    `<%= config.bin %> patch --local -f deploy.yaml --type merge -p '{"spec":{"replicas":3}}' --diff`,
    `<%= config.bin %> patch --local -f pod.yaml --type json -p '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}]'`,
  ];
  static flags = oclifFlagsFor(patchOptions);

  async run(): Promise<PatchResult[]> {
    return patchMain(this.argv);
  }
}
