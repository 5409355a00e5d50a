/** Custom resources with kubectl, orch's name set (`apiextensions.orch.io`): see crd-kubectl-suite.ts. */
import {customResourceSuite} from './crd-kubectl-suite.js';

customResourceSuite('orch');
