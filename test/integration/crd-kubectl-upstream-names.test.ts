/** Custom resources with kubectl, upstream's name set (`apiextensions.k8s.io`): see crd-kubectl-suite.ts. */
import {customResourceSuite} from './crd-kubectl-suite.js';

customResourceSuite('kubernetes');
