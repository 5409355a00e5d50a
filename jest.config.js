/** Jest runs the TypeScript sources directly through swc, as ESM. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts', '.tsx'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic' } }, target: 'es2022' }, module: { type: 'es6' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/test/**/*.test.tsx'],
  testTimeout: 30000,
  // Most suites wait on servers, kubectl and etcd rather than compute: two at a time on the 2-core
  // machines this runs on (jest's default there is one) keeps `./scripts/test.sh` well under 20 minutes.
  maxWorkers: 2,
};
