/**
 * AlwaysAdmit: lets every request through (upstream's deprecated admit plugin, kept for the
 * option's sake: naming it only changes the log of plugins in effect).
 */
import type {AdmissionPlugin} from '../interfaces.js';

export class AlwaysAdmit implements AdmissionPlugin {
  readonly name = 'AlwaysAdmit';
  admit(): void {}
  validate(): void {}
}
