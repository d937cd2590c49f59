/**
 * Our sources are ESM (NestJS 12); Jest on Node 20 cannot load ESM natively, so @swc/jest
 * compiles our TypeScript and the @nestjs packages to CommonJS for the tests.
 */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

const common = {
  transform: { '^.+\\.(t|j|mj)s$': swc },
  // ESM-only packages: @kubernetes/client-node and the OIDC libraries it loads, and the cookie
  // package light-my-request keeps in its own node_modules (Node loads it with require(esm); Jest
  // cannot): the lookbehind lets that nested folder through.
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|jose|@kubernetes/client-node|openid-client|oauth4webapi|light-my-request/node_modules/cookie)/)(?<!light-my-request/node_modules/)',
  ],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
};

/**
 * Test files that spawn processes, inject faults or generate input: each bounds its own waits and
 * gets a larger budget per test, so a busy 2-core machine slows them down without failing them.
 */
const SLOW = [
  'cli',
  'database-faults',
  'dbt-sync-crash',
  'embedded',
  'fuzz',
  'migrations',
  'model-sandbox',
  'notification-crash',
  'principal-cache',
  'processes',
  'queue',
  'rate-limit',
  'runtime-process',
  'scale-out',
  'startup-checks',
].map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`);

const e2e = {
  ...common,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    /**
     * Services on the migrated template database, without HTTP: rules that need no request (see
     * test/support/service.ts). Same database set-up as the end-to-end projects.
     */
    { ...e2e, displayName: 'service', testMatch: ['<rootDir>/test/service/**/*.spec.ts'] },
    {
      ...e2e,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: SLOW,
    },
    {
      ...e2e,
      displayName: 'e2e-slow',
      testMatch: SLOW,
      setupFilesAfterEnv: ['<rootDir>/test/support/slow-timeout.ts'],
    },
  ],
  testTimeout: 60_000,
  // The longest files start first (a fresh clone has no timings to order by).
  testSequencer: '<rootDir>/test/support/sequencer.mjs',
};
