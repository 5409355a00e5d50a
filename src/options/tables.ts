/** The option table of each program, for commands that list or look up any of them. */
import type {OptionTable, Program} from './spec.js';

export const PROGRAMS: readonly Program[] = ['apiserver', 'controller-manager', 'agent', 'patch'];

export async function loadOptionTable(program: Program): Promise<OptionTable> {
  switch (program) {
    case 'apiserver':
      return (await import('./apiserver.js')).apiserverOptions;
    case 'controller-manager':
      return (await import('./controller-manager.js')).controllerManagerOptions;
    case 'agent':
      return (await import('./agent.js')).agentOptions;
    case 'patch':
      return (await import('./patch.js')).patchOptions;
  }
}
