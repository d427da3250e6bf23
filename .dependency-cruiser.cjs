/**
 * The layers of src/ (README, "How it is built"), checked by test/architecture.test.ts.
 * A module is a folder of src/modules; its HTTP files are routes.ts and *-routes.ts.
 */
const HTTP_FILE = '(^|/)(routes|[a-z-]+-routes)[.]ts$';
/** A module's SQL files: its repositories (repository.ts, <topic>-repository.ts) and <topic>-queries.ts. */
const SQL_FILE = '(^|/)(repository|[a-z-]+-repository|[a-z-]+-queries)[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'core-is-the-bottom',
      comment: 'core holds what every layer shares; it imports no module, adapter, job or composition code (authentication reaches keys and users through ports)',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(modules|adapters|jobs|platform)/|^src/(services|registry|app|server|worker|workers|cli)[.]ts$' },
    },
    {
      name: 'platform-below-modules',
      comment: "platform holds the write path's shared parts (the event outbox); it stands on core and db and knows no module, adapter or job",
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|adapters|jobs)/|^src/(services|registry|app|server|worker|workers|cli)[.]ts$' },
    },
    {
      name: 'no-fastify-below-routes',
      comment: 'services, repositories and everything but HTTP files never see Fastify',
      severity: 'error',
      from: { path: '^src/(modules|adapters|jobs|db)/', pathNot: HTTP_FILE },
      to: { path: '(^|/)node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'modules-meet-through-services',
      comment: "a module reaches another module's data through that module's service (service.ts), never its repository or internals",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/service[.]ts$'] },
    },
    {
      name: 'sql-in-sql-files',
      comment: "a module's SQL is in its repositories and *-queries.ts files; services and the rest call them, so they import neither drizzle-orm nor the schema (its column types come through the repository)",
      severity: 'error',
      from: { path: '^src/modules/', pathNot: SQL_FILE },
      to: { path: ['(^|/)node_modules/drizzle-orm/', '^src/db/schema/'] },
    },
    {
      name: 'adapter-implementations-through-factories',
      comment: 'code depends on adapter interfaces; only the factories (and tests) name an implementation, so nothing can test for one with instanceof',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/adapters/factories[.]ts$' },
      to: { path: '^src/adapters/(storage/s3-object-store|payments/(local|stripe)-payments|sip/livekit-sip-trunks|mail/smtp-mailer)[.]ts$' },
    },
    {
      name: 'adapters-know-no-module',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/(modules|jobs)/|^src/(services|app)[.]ts$' },
    },
    {
      name: 'composition-root-at-the-top',
      comment: 'only process entries (and the workers they start) build or hold the composition root and the app',
      severity: 'error',
      from: { path: '^src/(core|modules|adapters|db|platform)/' },
      to: { path: '^src/(services|registry|app|server|worker|workers|cli)[.]ts$' },
    },
    {
      name: 'job-queue-knows-no-module',
      comment: 'the queue infrastructure names no module: modules list their queues in module.ts, the registry gathers them',
      severity: 'error',
      from: { path: '^src/jobs/' },
      to: { path: '^src/modules/|^src/(services|registry|app|server|worker|workers|cli)[.]ts$' },
    },
    {
      name: 'runtime-is-a-client',
      comment: 'the voice runtime reaches the platform only through the API (@switchboard/sdk and the call token), like any outside runtime',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: '^src/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^(src|runtime/src|sdk/src)/' },
      comment: 'no import circle, type-only imports included: a circle of types is a circle of knowledge all the same',
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.mjs', '.js', '.cjs', '.d.ts'] },
  },
};
