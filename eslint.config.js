// Lint rules: ESLint's and typescript-eslint's recommended sets, plus the house rules of
// STYLE.md (no `any`, no non-null `!`, `import type` for types). Formatting is not linted.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'test-results/', 'bench/results/', '**/*.min.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
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
    // Scripts served to browsers (the avatar and payment pages) run in a browser, not Node.
    files: ['src/**/public/**/*.js', 'src/**/assets/**/*.js', 'src/**/static/**/*.js'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', location: 'readonly', localStorage: 'readonly', HTMLElement: 'readonly', Audio: 'readonly', AudioContext: 'readonly', MediaRecorder: 'readonly', FormData: 'readonly', Blob: 'readonly', requestAnimationFrame: 'readonly', cancelAnimationFrame: 'readonly', EventSource: 'readonly', alert: 'readonly' },
    },
  },
)
