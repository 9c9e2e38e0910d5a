// Lint rules: ESLint's and typescript-eslint's recommended sets, plus the house rules of
// STYLE.md (no `any`, no non-null `!`, `import type` for types). Formatting is not linted.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'test-results/', 'bench/results/', '**/*.min.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: globals.node,
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // Scripts served to browsers (the avatar and payment pages, test pages) run in a browser, not Node.
    files: ['src/**/assets/**/*.js', 'src/**/public/**/*.js', 'src/**/static/**/*.js', 'test/fixtures/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['src/**/*worklet*.js'],
    languageOptions: { globals: { ...globals.browser, ...globals.audioWorklet } },
  },
)
