/** The node label rules live with the names they check (src/api/node-labels.ts). */
export * from '../../../api/node-labels.js';
