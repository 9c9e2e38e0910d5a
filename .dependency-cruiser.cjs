/** The architecture rules of issue 15 (docs/architecture.md): checked in `npm run lint`. */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'No import cycles anywhere.', from: {}, to: { circular: true, dependencyTypesNot: ['type-only'] } },
    {
      name: 'core-knows-no-service',
      severity: 'error',
      comment: 'The core imports no service.',
      from: { path: '^src/core/' },
      to: { path: '^src/services/' },
    },
    {
      name: 'services-do-not-import-each-other',
      severity: 'error',
      comment: 'A service imports only core and itself.',
      from: { path: '^src/services/([^/]+)/' },
      to: { path: '^src/services/[^/]+/', pathNot: ['^src/services/$1/', '^src/services/index\\.ts$'] },
    },
    {
      name: 'modules-through-their-index',
      severity: 'error',
      comment: 'A module is entered only through its index.ts.',
      from: { path: '^src/services/([^/]+)/modules/([^/]+)/' },
      to: { path: '^src/services/$1/modules/([^/]+)/', pathNot: ['^src/services/$1/modules/$2/', '^src/services/$1/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'outside-code-through-module-index',
      severity: 'error',
      comment: 'Code outside a module (app.ts, cli.ts, http/) enters it through its index.ts.',
      from: { path: '^src/services/([^/]+)/', pathNot: '^src/services/[^/]+/modules/' },
      to: { path: '^src/services/$1/modules/[^/]+/', pathNot: '^src/services/$1/modules/[^/]+/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
